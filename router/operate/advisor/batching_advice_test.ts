import assert from "node:assert/strict";
import { type BackendBatching, batchingAdvice, type PartMeasure } from "./batching_advice.ts";

const bounds = { min: 2, max: 16, max_wait_ms: 2, latency_budget_ms: 50 };

function part(arrivalPerS: number, fixedMs: number, perRowMs = 0.01): PartMeasure {
  return {
    part: "L0/E0",
    arrivalPerS,
    groups: 100,
    rows: 300,
    executions: 50,
    queueDelayMsSum: 100,
    queueDelayMsMax: 5,
    service: { fixedMs, perRowMs },
  };
}

function backend(parts: PartMeasure[], slots = 1): BackendBatching {
  return { backend: "b1", slots, parts };
}

Deno.test("heavy per-execution cost at a high rate asks for larger batches and a longer wait", () => {
  // 10 parts × 200 groups/s × 1 ms fixed, at 2× peak: 4000 ms/s of fixed cost on 1 slot;
  // per-row 10 × 400 × 0.01 × 3 = 120 → B* = ⌈4000 / (700 − 120)⌉ = 7 → max 8; filling 7
  // at 200/s takes 30 ms, capped at a quarter of the 50 ms budget.
  const advice = batchingAdvice([backend(Array.from({ length: 10 }, () => part(200, 1)))], {
    ...bounds,
    max: 4,
  });
  assert.equal(advice.recommended, true);
  assert.equal(advice.apply, "config");
  assert.deepEqual(advice.details["proposed"], { min: 2, max: 8, max_wait_ms: 12.5 });
  assert.equal(advice.settings?.["batching.max"], 8);
});

Deno.test("bounds that fit the load yield no recommendation", () => {
  // 2 parts × 20 groups/s × 0.1 ms: batches of 1 suffice; max_wait·rate ≥ 1 keeps min.
  const advice = batchingAdvice([backend([part(600, 0.1, 0), part(600, 0.1, 0)])], bounds);
  assert.equal(advice.recommended, false);
  assert.equal(advice.apply, "none");
  assert.match(advice.expectedEffect, /fit the measured load/);
});

Deno.test("at low load, min 1 stops lone requests from waiting", () => {
  const advice = batchingAdvice([backend([part(5, 0.1, 0)])], bounds);
  assert.equal(advice.recommended, true);
  assert.deepEqual(advice.details["proposed"], { min: 1, max: 16, max_wait_ms: 2 });
});

Deno.test("when per-row work alone saturates, it says capacity, not bounds", () => {
  const advice = batchingAdvice([backend([part(1000, 0.1, 1)])], bounds);
  assert.equal(advice.recommended, false);
  assert.match(advice.expectedEffect, /add backends or replicas/);
});

Deno.test("no traffic, no advice", () => {
  assert.equal(batchingAdvice([backend([part(0, 1)])], bounds).recommended, false);
});
