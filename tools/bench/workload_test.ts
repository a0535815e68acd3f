/** The benchmark workload: request sizes as asked, and `--tokens` parsed or refused. */
import assert from "node:assert/strict";
import { prepareWorkload, tokenRange } from "./workload.ts";

Deno.test("tokenRange() parses <min>-<max> and names --tokens when it cannot", () => {
  assert.deepEqual(tokenRange("16-64"), { min: 16, max: 64 });
  assert.deepEqual(tokenRange(" 8-8 "), { min: 8, max: 8 });
  for (const bad of ["", "16", "64-16", "0-4", "a-b", "4-"]) {
    assert.throws(() => tokenRange(bad), /Cannot parse --tokens/, bad);
  }
});

Deno.test("prepareWorkload() draws sizes within the token range, else 1 + geometric", () => {
  const ranged = prepareWorkload({ dModel: 4, traffic: undefined, tokens: { min: 3, max: 5 } });
  assert.ok(ranged.every((r) => r.rows >= 3 && r.rows <= 5));
  assert.deepEqual(new Set(ranged.map((r) => r.rows)), new Set([3, 4, 5]));
  const drawn = prepareWorkload({ dModel: 4, traffic: undefined, maxRows: 16 });
  assert.ok(drawn.every((r) => r.rows >= 1 && r.rows <= 16));
  assert.ok(drawn.some((r) => r.rows === 1) && drawn.some((r) => r.rows > 3));
});
