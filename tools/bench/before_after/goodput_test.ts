import assert from "node:assert/strict";
import { emptyResult, type LoadResult } from "../load_generator.ts";
import { measurePhase, slice, steadyPart } from "./goodput.ts";

function result(latencies: number[], extra: Partial<LoadResult> = {}): LoadResult {
  return {
    ...emptyResult(),
    seconds: 10,
    sent: latencies.length,
    ok: latencies.length,
    rows: 2 * latencies.length,
    latencies,
    timeline: latencies.map((ms, i) => [i, ms, 2]),
    ...extra,
  };
}

Deno.test("measurePhase() counts good requests within the SLO against every arrival", () => {
  const latencies = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
  const m = measurePhase(result(latencies, { sent: 12, errors: 2, shed: 3 }), 50);
  assert.equal(m.arrivals, 15);
  assert.equal(m.throughputRps, 1);
  assert.equal(m.tokensPerS, 2);
  assert.equal(m.goodRps, 0.5); // 10…50 ms: 5 good in 10 s
  assert.equal(m.attainment, 5 / 15); // errors and shed arrivals are never good
  assert.deepEqual([m.p50, m.p90, m.p99, m.mean], [50, 90, 100, 55]);
});

Deno.test("measurePhase() of an empty phase is NaN latency and zero goodput, never a throw", () => {
  const m = measurePhase(emptyResult(), 100);
  assert.equal(m.attainment, 0);
  assert.equal(m.goodRps, 0);
  assert.ok(Number.isNaN(m.p99));
});

Deno.test("slice() keeps the answers completed in a window, on the window's clock", () => {
  const part = slice(result([10, 20, 30, 40]), 1, 3);
  assert.deepEqual(part.timeline, [[0, 20, 2], [1, 30, 2]]);
  assert.equal(part.seconds, 2);
  assert.equal(measurePhase(part, 25).goodRps, 0.5);
});

Deno.test("steadyPart() drops the ramp's answers but keeps every error", () => {
  const whole = result([10, 20, 30, 40], { errors: 2, sent: 6, errorKinds: { "503": 2 } });
  const steady = steadyPart(whole, 2);
  assert.deepEqual(steady.latencies, [30, 40]);
  assert.equal(steady.seconds, 8);
  assert.deepEqual([steady.ok, steady.errors, steady.sent], [2, 2, 4]);
  assert.deepEqual(steady.errorKinds, { "503": 2 });
});
