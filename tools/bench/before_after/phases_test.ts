import assert from "node:assert/strict";
import {
  compression,
  eplbPeriodS,
  loadSeconds,
  mixAt,
  mixSegments,
  type PhasePlan,
  rotate,
} from "./phases.ts";

const PLAN: PhasePlan = {
  warmS: 20,
  settleS: 10,
  maxWarmS: 60,
  idleS: 5,
  saturationS: 10,
  rampS: 4,
  sweepS: 10,
  rates: [0.5, 0.7, 0.9, 1.1],
  shiftS: 60,
  shiftRate: 0.9,
  shifts: 2,
};

Deno.test("mixSegments() cuts the shift phase into equal stretches, one mix each", () => {
  assert.deepEqual(mixSegments(PLAN), [
    { startS: 0, durationS: 20, mix: 0 },
    { startS: 20, durationS: 20, mix: 1 },
    { startS: 40, durationS: 20, mix: 2 },
  ]);
  const segments = mixSegments(PLAN);
  assert.deepEqual([0, 19.9, 20, 45, 60].map((t) => mixAt(segments, t)), [0, 0, 1, 2, 2]);
  assert.throws(() => mixSegments({ shiftS: 60, shifts: 0 }), /integer shifts ≥ 1, got 60, 0/);
  assert.throws(() => mixSegments({ shiftS: 0, shifts: 1 }), RangeError);
});

Deno.test("the shift phase is a compressed hour: 10 minutes of load are a sixth of it", () => {
  assert.equal(compression(PLAN), 60);
  assert.equal(eplbPeriodS(PLAN), 10);
  assert.equal(eplbPeriodS({ shiftS: 180 }), 30);
  assert.equal(loadSeconds(PLAN), 20 + 5 + 4 + 10 + 40 + 60);
});

Deno.test("rotate() shifts left, wrapping", () => {
  assert.deepEqual(rotate(["a", "b", "c"], 1), ["b", "c", "a"]);
  assert.deepEqual(rotate(["a", "b", "c"], 4), ["b", "c", "a"]);
  assert.deepEqual(rotate([], 2), []);
});
