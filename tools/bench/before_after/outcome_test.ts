import assert from "node:assert/strict";
import { fakeRun } from "./_fake_run.ts";
import { outcomeOf, spreadOf } from "./outcome.ts";

Deno.test("outcomeOf() applies the SLO to every phase and takes load figures from the shift", () => {
  const run = fakeRun({
    config: "switchyard",
    seed: 3,
    saturated: 1000,
    sweep: { "0.5": [500, 20], "0.9": [900, 80] },
    shift: [600, 30],
    backendCv: 0.2,
    switches: 2,
  });
  run.phases[3]!.result.errors = 100;
  run.phases[3]!.result.sent += 100;
  run.phases[3]!.result.errorKinds = { "429": 100 };
  const o = outcomeOf(run, 50);
  assert.equal(o.saturation.throughputRps, 100);
  assert.equal(o.saturation.tokensPerS, 300);
  assert.deepEqual(o.sweep.map((s) => [s.fraction, s.measure.attainment]), [
    [0.5, 1],
    [0.9, 0], // 80 ms > 50 ms, and the 100 errors are arrivals too
  ]);
  assert.equal(o.shift!.goodRps, 20);
  assert.equal(o.shiftByMix.length, 3);
  assert.deepEqual(o.shiftByMix.map((m) => m.goodRps), [20, 20, 20]);
  assert.equal(o.backendCv, 0.2);
  assert.equal(o.switches, 2);
  assert.equal(o.errorRate, 100 / (50 + 1000 + 500 + 1000 + 600));
  assert.deepEqual(o.errorKinds, { "429": 100 });
});

Deno.test("spreadOf() ignores missing figures and reports n = 0 when none", () => {
  assert.deepEqual(spreadOf([1, null, 3, NaN]), { mean: 2, min: 1, max: 3, n: 2 });
  assert.equal(spreadOf([null]).n, 0);
});
