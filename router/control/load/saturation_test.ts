import assert from "node:assert/strict";
import fc from "fast-check";
import {
  backendCapacity,
  poolSaturation,
  queueShare,
  rememberCapacity,
  SATURATED,
  saturationOf,
  scaleAdvice,
} from "./saturation.ts";

const calm = {
  deviceBusy: 0.3,
  hostBusy: 0.2,
  queueWaitMs: 0.5,
  serviceMs: 4.5,
  admittedPerS: 50,
  shedPerS: 0,
};

Deno.test("saturationOf(): the largest term, and which one set it", () => {
  assert.deepEqual(saturationOf(calm), {
    value: 0.3,
    bottleneck: "device",
    deviceBusy: 0.3,
    hostBusy: 0.2,
    queueShare: 0.1,
    shedShare: 0,
  });
  // The overload: executor 8 % busy, host lagging, queues 900 ms per 5 ms execution.
  const overloaded = saturationOf({
    ...calm,
    deviceBusy: 0.08,
    hostBusy: 0.4,
    queueWaitMs: 900,
    serviceMs: 5,
  });
  assert.equal(overloaded.bottleneck, "queue");
  assert.ok(overloaded.value >= SATURATED);
  // Shedding forces ≥ 0.9 whatever the ratios: 0.9 + 0.1 × 20/70.
  const shedding = saturationOf({ ...calm, admittedPerS: 50, shedPerS: 20 });
  assert.equal(shedding.bottleneck, "shedding");
  assert.ok(Math.abs(shedding.value - (0.9 + 0.1 * 20 / 70)) < 1e-12);
  // An older backend without host fields: device time alone.
  const older = saturationOf({ ...calm, hostBusy: undefined, queueWaitMs: undefined });
  assert.equal(older.value, 0.3);
  assert.equal(older.hostBusy, undefined);
});

Deno.test("queueShare(): M/M/1 wait ÷ (wait + service) is the utilisation", () => {
  for (const rho of [0.1, 0.5, 0.9]) {
    const service = 4;
    const wait = rho / (1 - rho) * service;
    assert.ok(Math.abs(queueShare(wait, service)! - rho) < 1e-12);
  }
  assert.equal(queueShare(0, 0), undefined);
  assert.equal(queueShare(undefined, undefined), undefined);
});

const ratio = fc.double({ min: 0, max: 1, noNaN: true });
const ms = fc.option(fc.double({ min: 0, max: 10_000, noNaN: true }), { nil: undefined });
const rate = fc.double({ min: 0, max: 1000, noNaN: true });
const inputs = fc.record({
  deviceBusy: ratio,
  hostBusy: fc.option(ratio, { nil: undefined }),
  queueWaitMs: ms,
  serviceMs: ms,
  admittedPerS: rate,
  shedPerS: rate,
});

Deno.test("saturationOf(): in [0, 1], ≥ every term, ≥ 0.9 while shedding (all inputs)", () => {
  fc.assert(fc.property(inputs, (i) => {
    const s = saturationOf(i);
    assert.ok(s.value >= 0 && s.value <= 1);
    assert.ok(s.value >= i.deviceBusy - 1e-12);
    assert.ok(s.value >= (i.hostBusy ?? 0) - 1e-12);
    assert.ok(s.value >= (queueShare(i.queueWaitMs, i.serviceMs) ?? 0) - 1e-12);
    if (i.shedPerS > 0) assert.ok(s.value >= SATURATED);
    // Monotone: more device time never lowers it.
    const more = saturationOf({ ...i, deviceBusy: Math.min(1, i.deviceBusy + 0.1) });
    assert.ok(more.value >= s.value - 1e-12);
  }));
});

Deno.test("backendCapacity(): measured at saturation, else extrapolated, never above a measurement", () => {
  const none = new Map();
  assert.deepEqual(backendCapacity({ id: "a", saturation: 0.95, tokensPerS: 60 }, none), {
    tokensPerS: 60,
    source: "measured",
  });
  assert.deepEqual(backendCapacity({ id: "a", saturation: 0.5, tokensPerS: 60 }, none), {
    tokensPerS: 120,
    source: "extrapolated",
  });
  // The case: 8 % executor busy made 483 tok/s out of 40; the memory of a
  // saturated 60 tok/s caps any extrapolation.
  const memory = rememberCapacity(
    none,
    [{ id: "a", saturation: 0.97, tokensPerS: 60 }],
    0,
    600_000,
  );
  assert.deepEqual(backendCapacity({ id: "a", saturation: 0.08, tokensPerS: 40 }, memory), {
    tokensPerS: 60,
    source: "remembered",
  });
  assert.equal(backendCapacity({ id: "a", saturation: 0.01, tokensPerS: 1 }, none), undefined);
  // Memories expire.
  const later = rememberCapacity(memory, [], 600_001, 600_000);
  assert.equal(later.size, 0);
});

Deno.test("backendCapacity(): never below what the backend serves now (all inputs)", () => {
  fc.assert(fc.property(ratio, fc.double({ min: 0.001, max: 1e5, noNaN: true }), (s, t) => {
    const estimate = backendCapacity({ id: "a", saturation: s, tokensPerS: t }, new Map());
    if (s < 0.05) return assert.equal(estimate, undefined);
    assert.ok(estimate!.tokensPerS >= t - 1e-9);
    if (s >= SATURATED) assert.equal(estimate!.tokensPerS, t);
  }));
});

Deno.test("scaleAdvice(): more backends when saturated, none on a steady pool, fewer when idle", () => {
  const options = { target: 0.8, maxBackends: 8 };
  // The case: saturated pool of 2 (with 503s) was advised 2 → 1.
  const overloaded = scaleAdvice([
    { saturation: 0.97, admittedPerS: 20, shedPerS: 40 },
    { saturation: 0.95, admittedPerS: 20, shedPerS: 40 },
  ], options);
  assert.equal(overloaded.direction, "up");
  assert.ok(overloaded.recommended >= 3 && overloaded.recommended <= 8);
  // Saturated without shedding: at least one more.
  const saturated = scaleAdvice([{ saturation: 0.92, admittedPerS: 20, shedPerS: 0 }], options);
  assert.equal(saturated.recommended, 2);
  const steady = scaleAdvice([
    { saturation: 0.45, admittedPerS: 20, shedPerS: 0 },
    { saturation: 0.5, admittedPerS: 20, shedPerS: 0 },
  ], options);
  assert.deepEqual([steady.direction, steady.recommended], ["none", 2]);
  const idle = scaleAdvice([
    { saturation: 0.1, admittedPerS: 2, shedPerS: 0 },
    { saturation: 0.1, admittedPerS: 2, shedPerS: 0 },
    { saturation: 0.1, admittedPerS: 2, shedPerS: 0 },
  ], options);
  assert.deepEqual([idle.direction, idle.recommended], ["down", 1]);
});

Deno.test("scaleAdvice(): never fewer while saturated or any backend sheds, within [1, max] (all inputs)", () => {
  const sample = fc.record({ saturation: ratio, admittedPerS: rate, shedPerS: rate });
  fc.assert(fc.property(fc.array(sample, { minLength: 1, maxLength: 12 }), (samples) => {
    const advice = scaleAdvice(samples, { target: 0.8, maxBackends: 8 });
    const n = samples.length;
    assert.ok(advice.recommended >= 1 && advice.recommended <= Math.max(8, n));
    const mean = samples.reduce((sum, s) => sum + s.saturation, 0) / n;
    if (mean >= SATURATED || samples.some((s) => s.shedPerS > 0)) {
      assert.ok(advice.recommended >= n, JSON.stringify(advice));
    }
    if (mean >= SATURATED && n < 8) assert.ok(advice.recommended > n);
    assert.equal(
      advice.direction,
      advice.recommended > n ? "up" : advice.recommended < n ? "down" : "none",
    );
  }));
});

Deno.test("poolSaturation(): the mean, at least 0.9 + 0.1 · share while the router sheds", () => {
  assert.equal(poolSaturation([]), undefined);
  assert.equal(poolSaturation([0.5, 0.7]), 0.6);
  // The bench's overload: the router's admission refused 429s, backends at 0.52 and 0.72.
  const shed = poolSaturation([0.52, 0.72], { shedPerS: 250, admittedPerS: 520 })!;
  assert.ok(Math.abs(shed - (0.9 + 0.1 * 250 / 770)) < 1e-12);
  const advice = scaleAdvice([
    { saturation: 0.52, admittedPerS: 260, shedPerS: 0 },
    { saturation: 0.72, admittedPerS: 260, shedPerS: 0 },
  ], { target: 0.8, maxBackends: 8, router: { shedPerS: 250, admittedPerS: 520 } });
  assert.equal(advice.direction, "up");
  assert.ok(advice.recommended >= 3, JSON.stringify(advice));
});
