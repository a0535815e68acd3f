import assert from "node:assert/strict";
import { diurnalSchedule, rotate } from "./schedule.ts";
import { perSecond, toCsv } from "./series.ts";

Deno.test("diurnalSchedule(): contiguous segments, a daily swing around 1 and one spike", () => {
  const schedule = diurnalSchedule(80);
  assert.equal(schedule.length, 8);
  schedule.forEach((segment, i) => {
    assert.equal(segment.startS, i * 10);
    assert.equal(segment.durationS, 10);
  });
  const day = schedule.filter((s) => s.label !== "spike");
  assert.equal(schedule.filter((s) => s.label === "spike").length, 1);
  assert.equal(schedule[5]!.rateMultiplier, 2);
  for (const segment of day) {
    assert.ok(segment.rateMultiplier >= 0.7 - 1e-12 && segment.rateMultiplier <= 1.3 + 1e-12);
  }
  // The mix differs between the first half, the second half and the spike.
  assert.deepEqual(new Set(schedule.map((s) => s.mixShift)), new Set([0, 1, 3]));
  assert.throws(() => diurnalSchedule(0), /totalS > 0/);
});

Deno.test("rotate() shifts left, wrapping", () => {
  assert.deepEqual(rotate(["a", "b", "c"], 1), ["b", "c", "a"]);
  assert.deepEqual(rotate(["a", "b", "c"], 4), ["b", "c", "a"]);
  assert.deepEqual(rotate([], 2), []);
});

Deno.test("perSecond() buckets completions and toCsv() writes them", () => {
  const rows = perSecond([[0.2, 10, 2], [0.9, 30, 1], [2.5, 5, 4]], 3);
  assert.deepEqual(rows.map((r) => [r.t, r.requestsPerS, r.tokensPerS, r.p50, r.p99]), [
    [0, 2, 3, 10, 30],
    [1, 0, 0, NaN, NaN],
    [2, 1, 4, 5, 5],
  ]);
  assert.equal(toCsv(["t", "p50"], [[0, 10], [1, NaN]]), "t,p50\n0,10\n1,\n");
});
