import assert from "node:assert/strict";
import { bestRun } from "./capacity.ts";

Deno.test("bestRun() picks the highest goodput, the first of equals", () => {
  const runs = [
    { concurrency: 16, goodput_rps: 200, errors: 0 },
    { concurrency: 32, goodput_rps: 260, errors: 0 },
    { concurrency: 64, goodput_rps: 260, errors: 3 },
    { concurrency: 128, goodput_rps: 240, errors: 9 },
  ];
  assert.equal(bestRun(runs).concurrency, 32);
  assert.throws(() => bestRun([]), /no runs/);
});
