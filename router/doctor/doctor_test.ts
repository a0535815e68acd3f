import assert from "node:assert/strict";
import { diagnose } from "./doctor.ts";

const busy = {
  experts: 64,
  utilisation: 0.4,
  latencyCv: 0.8,
  top10Share: 0.62,
  tokensPerS: 2000,
};

Deno.test("diagnose() answers each check at its threshold", () => {
  const report = diagnose(busy);
  assert.deepEqual(report.checks.map((c) => c.answer), ["yes", "yes", "yes", "yes", "yes"]);
  assert.equal(report.verdict, "deploy now");
  assert.equal(report.checks[4]!.value, 2000 * 86_400);
  assert.equal(report.checks[4]!.measured, "172.8 M tokens/day (extrapolated)");
  // Exactly at a threshold is not beyond it.
  const edge = diagnose({
    experts: 16,
    utilisation: 0.7,
    latencyCv: 0.3,
    top10Share: 0.5,
    tokensPerS: 100e6 / 86_400,
  });
  assert.deepEqual(edge.checks.map((c) => c.answer), ["no", "no", "no", "no", "no"]);
  assert.equal(edge.verdict, "not needed");
});

Deno.test("diagnose() verdict: 1–2 yes → pilot, 3+ → deploy now", () => {
  const two = diagnose({ ...busy, latencyCv: 0.1, top10Share: 0.2, tokensPerS: 10 });
  assert.equal(two.yes, 2);
  assert.equal(two.verdict, "pilot");
  const three = diagnose({ ...busy, latencyCv: 0.1, tokensPerS: 10 });
  assert.equal(three.yes, 3);
  assert.equal(three.verdict, "deploy now");
});

Deno.test("diagnose() says unknown without data and does not count it", () => {
  const report = diagnose({
    experts: 32,
    utilisation: undefined,
    latencyCv: undefined,
    top10Share: Number.NaN,
    tokensPerS: undefined,
  });
  assert.deepEqual(report.checks.map((c) => c.answer), [
    "yes",
    "unknown",
    "unknown",
    "unknown",
    "unknown",
  ]);
  assert.equal(report.checks[1]!.measured, "no data yet");
  assert.equal(report.verdict, "pilot");
});
