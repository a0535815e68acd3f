import assert from "node:assert/strict";
import { backendsFor, type CapacityPlanInput, planCapacity } from "./capacity_plan.ts";
import type { PredictedPoint } from "./predict_load.ts";
import type { PrewarmEvent } from "./prewarm_types.ts";

const MIN = 60_000;
const NOW = 1_700_000_000_000 - (1_700_000_000_000 % MIN);
const EVENT: PrewarmEvent = {
  name: "promo",
  start: NOW + 30 * MIN,
  end: NOW + 90 * MIN,
  multiplier: 5,
};

/** One point per minute for `minutes`, 100 tokens/s, × 5 inside the event. */
function points(minutes: number, event: PrewarmEvent | null = EVENT): PredictedPoint[] {
  return Array.from({ length: minutes }, (_, i) => {
    const at = NOW + (i + 1) * MIN;
    const inside = event !== null && at >= event.start && at < event.end;
    return { at, tokensPerS: inside ? 500 : 100, event: inside ? event : null };
  });
}

function input(overrides: Partial<CapacityPlanInput> = {}): CapacityPlanInput {
  return {
    now: NOW,
    points: points(120),
    capacityPerBackend: 62.5, // × 0.8 = 50 tokens/s per backend: 100 → 2, 500 → 10
    threshold: 0.8,
    leadMs: 35 * MIN,
    serving: 2,
    floor: 2,
    ceiling: null,
    holdMs: 10 * MIN,
    bucketMs: MIN,
    ...overrides,
  };
}

Deno.test("backendsFor() is ceil(load / (capacity · threshold)), exact at the boundary", () => {
  assert.equal(backendsFor(100, 62.5, 0.8), 2);
  assert.equal(backendsFor(100.01, 62.5, 0.8), 3);
  assert.equal(backendsFor(0, 62.5, 0.8), 0);
  assert.throws(() => backendsFor(1, 0, 0.8), RangeError);
});

Deno.test("planCapacity(): an event within one lead time needs its backends by its start", () => {
  const plan = planCapacity(input());
  assert.equal(plan.target, 10);
  assert.equal(plan.needed, 10);
  assert.equal(plan.readyBy, EVENT.start);
  assert.equal(plan.source, "event");
  assert.equal(plan.event, "promo");
  assert.equal(plan.capped, false);
  assert.match(plan.reason, /event "promo" needs 10 backends/);
});

Deno.test("planCapacity(): an event beyond one lead time is not planned yet", () => {
  const plan = planCapacity(input({ leadMs: 20 * MIN }));
  assert.equal(plan.target, 2);
  assert.equal(plan.readyBy, null);
  // …but the pool keeps what the event will need within lead + hold.
  assert.equal(plan.keep, 10);
});

Deno.test("planCapacity(): a forecast ramp needs backends by the first short bucket's start", () => {
  const ramp = Array.from({ length: 60 }, (_, i) => ({
    at: NOW + (i + 1) * MIN,
    tokensPerS: 100 + 5 * i, // passes 100 (2 backends) at the 2nd bucket, 150 (3) at the 11th
    event: null,
  }));
  const plan = planCapacity(input({ points: ramp, leadMs: 20 * MIN }));
  assert.equal(plan.source, "forecast");
  assert.equal(plan.target, Math.ceil((100 + 5 * 19) / 50));
  assert.equal(plan.readyBy, NOW + MIN); // bucket 2 (105 tokens/s) starts at NOW + 1 min
});

Deno.test("planCapacity(): the ceiling caps a target but never below the floor or the pool", () => {
  const capped = planCapacity(input({ ceiling: 6 }));
  assert.deepEqual([capped.target, capped.needed, capped.capped], [6, 10, true]);
  assert.match(capped.reason, /cut to prewarm\.max_backends 6 \(needs 10\)/);
  // A 32-backend pool under max_backends 8 is never clamped below its own size.
  const big = planCapacity(input({ ceiling: 8, serving: 32, floor: 32 }));
  assert.equal(big.target, 32);
  assert.equal(big.capped, false);
});

Deno.test("planCapacity(): after the peak, keep says how far the pool may shrink (never below the floor)", () => {
  const after = planCapacity(
    input({ now: EVENT.end, points: points(200).filter((p) => p.at > EVENT.end), serving: 10 }),
  );
  assert.equal(after.readyBy, null);
  assert.equal(after.keep, 2);
  assert.equal(after.source, "floor");
  const quiet = planCapacity(
    input({ points: points(60, null).map((p) => ({ ...p, tokensPerS: 1 })), floor: 3, serving: 3 }),
  );
  assert.deepEqual([quiet.target, quiet.keep], [3, 3]);
});
