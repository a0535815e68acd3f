import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type BatchBounds,
  batchingWindow,
  decideDispatch,
  entryWindow,
  expectedBatch,
  predictedUtilisation,
  type QueueLoad,
  TARGET_UTILISATION,
  targetBatchSize,
} from "./control_law.ts";

const bounds: BatchBounds = { min: 2, max: 16, maxWaitMs: 2, latencyBudgetMs: 50 };
const linear = (fixedMs: number, perRowMs: number) => (rows: number) => fixedMs + perRowMs * rows;

const queueArb = fc.record({
  arrivalPerMs: fc.double({ min: 0, max: 20, noNaN: true }),
  meanRows: fc.double({ min: 1, max: 16, noNaN: true }),
  fixedMs: fc.double({ min: 0, max: 2, noNaN: true }),
  perRowMs: fc.double({ min: 0, max: 0.1, noNaN: true }),
}).map((q): QueueLoad => ({ ...q, serviceMs: linear(q.fixedMs, q.perRowMs) }));
const queuesArb = fc.array(queueArb, { minLength: 1, maxLength: 40 });
const boundsArb = fc.record({
  min: fc.integer({ min: 1, max: 16 }),
  extra: fc.integer({ min: 0, max: 48 }),
  maxWaitMs: fc.double({ min: 0, max: 20, noNaN: true }),
  latencyBudgetMs: fc.double({ min: 0.1, max: 500, noNaN: true }),
}).map(({ min, extra, maxWaitMs, latencyBudgetMs }) => ({
  min,
  max: min + extra,
  maxWaitMs,
  latencyBudgetMs,
}));

Deno.test("batchingWindow() stays within [0, maxWaitMs]", () => {
  fc.assert(
    fc.property(queuesArb, fc.integer({ min: 1, max: 8 }), boundsArb, (queues, slots, b) => {
      const window = batchingWindow(queues, { slots, hostMsPerExecution: 0.01 }, b);
      assert.ok(window >= 0 && window <= b.maxWaitMs + 1e-12, `window ${window}`);
    }),
  );
});

Deno.test("batchingWindow() is monotone non-decreasing when arrivals grow", () => {
  fc.assert(fc.property(
    queuesArb,
    fc.integer({ min: 1, max: 8 }),
    boundsArb,
    fc.double({ min: 1, max: 20, noNaN: true }),
    (queues, slots, b, factor) => {
      const busier = queues.map((q) => ({ ...q, arrivalPerMs: q.arrivalPerMs * factor }));
      const capacity = { slots, hostMsPerExecution: 0.01 };
      const low = batchingWindow(queues, capacity, b);
      const high = batchingWindow(busier, capacity, b);
      assert.ok(high >= low - 1e-12, `λ×${factor}: ${low} → ${high}`);
    },
  ));
});

Deno.test("batchingWindow() is zero at low load, so nothing waits", () => {
  // 32 experts, each a request every 50 ms, 0.3 ms per execution: 19 % of one slot.
  const quiet = Array.from({ length: 32 }, () => ({
    arrivalPerMs: 0.02,
    meanRows: 1,
    serviceMs: linear(0.3, 0.01),
  }));
  assert.equal(batchingWindow(quiet, { slots: 1, hostMsPerExecution: 0.02 }, bounds), 0);
  assert.equal(targetBatchSize(0.02, 0, bounds), 1);
});

Deno.test("batchingWindow() opens just enough to bring predicted utilisation under ρ*", () => {
  // One queue, λ = 4/ms, s(n) = 0.5 ms: W = 0 needs 200 % of a slot.
  const queues = [{ arrivalPerMs: 4, meanRows: 1, serviceMs: linear(0.5, 0) }];
  const capacity = { slots: 1, hostMsPerExecution: 0 };
  const window = batchingWindow(queues, capacity, bounds);
  assert.ok(window > 0 && window < bounds.maxWaitMs);
  assert.ok(predictedUtilisation(queues, window, capacity, bounds.max) <= TARGET_UTILISATION);
  const step = bounds.maxWaitMs / 16;
  assert.ok(predictedUtilisation(queues, window - step, capacity, bounds.max) > TARGET_UTILISATION);
});

Deno.test("batchingWindow() is maxWaitMs at saturation and respects the latency budget", () => {
  const flooded = [{ arrivalPerMs: 100, meanRows: 4, serviceMs: linear(1, 0.1) }];
  const capacity = { slots: 1, hostMsPerExecution: 0 };
  assert.equal(batchingWindow(flooded, capacity, bounds), bounds.maxWaitMs);
  // A 16-group batch of 4 rows takes 7.4 ms; an 8 ms budget leaves 0.6 ms of waiting.
  const tight = batchingWindow(flooded, capacity, { ...bounds, latencyBudgetMs: 8 });
  assert.ok(Math.abs(tight - 0.6) < 1e-9, `window ${tight}`);
});

Deno.test("batchingWindow() also opens when the host thread, not the device, is the bottleneck", () => {
  // Device nearly idle (0.01 ms per execution) but 0.2 ms of host time per execution
  // at 5 executions/ms is a fully busy host thread: batching must engage.
  const queues = Array.from({ length: 5 }, () => ({
    arrivalPerMs: 1,
    meanRows: 1,
    serviceMs: linear(0.01, 0),
  }));
  assert.equal(batchingWindow(queues, { slots: 1, hostMsPerExecution: 0 }, bounds), 0);
  const window = batchingWindow(queues, { slots: 1, hostMsPerExecution: 0.2 }, bounds);
  assert.ok(window > 0);
  assert.ok(
    predictedUtilisation(queues, window, { slots: 1, hostMsPerExecution: 0.2 }, bounds.max) <=
      TARGET_UTILISATION,
  );
});

Deno.test("targetBatchSize() is 1 without a window, else within [min, max]", () => {
  fc.assert(fc.property(
    fc.double({ min: 0, max: 50, noNaN: true }),
    fc.double({ min: 0, max: 20, noNaN: true }),
    boundsArb,
    (lambda, window, b) => {
      const target = targetBatchSize(lambda, window, b);
      assert.ok(Number.isInteger(target));
      if (window <= 0) assert.equal(target, 1);
      else assert.ok(target >= Math.min(b.min, b.max) && target <= b.max, `target ${target}`);
      assert.ok(expectedBatch(lambda, window, b.max) <= b.max);
    },
  ));
});

Deno.test("decideDispatch() never lets the head wait past the window", () => {
  fc.assert(fc.property(
    fc.integer({ min: 1, max: 32 }),
    fc.integer({ min: 1, max: 32 }),
    fc.double({ min: 0, max: 10, noNaN: true }),
    fc.double({ min: 0, max: 10, noNaN: true }),
    (groups, target, headWaitMs, window) => {
      const decision = decideDispatch({ groups, headWaitMs }, target, window);
      if (groups >= target || headWaitMs >= window) assert.equal(decision.dispatch, true);
      if (!decision.dispatch) assert.ok(headWaitMs + decision.waitMs <= window + 1e-9);
    },
  ));
});

Deno.test("decideDispatch() waits for company only inside the window", () => {
  assert.deepEqual(decideDispatch({ groups: 1, headWaitMs: 0.5 }, 4, 2), {
    dispatch: false,
    waitMs: 1.5,
  });
  assert.deepEqual(decideDispatch({ groups: 4, headWaitMs: 0 }, 4, 2), { dispatch: true });
  assert.deepEqual(decideDispatch({ groups: 1, headWaitMs: 0 }, 1, 0), { dispatch: true });
});

Deno.test("entryWindow() stays within [0, maxWaitMs], never shrinks the law's window, and grows with λ", () => {
  fc.assert(fc.property(
    boundsArb,
    fc.double({ min: 0, max: 50, noNaN: true }),
    fc.double({ min: 0, max: 20, noNaN: true }),
    fc.double({ min: 0, max: 20, noNaN: true }),
    fc.double({ min: 0, max: 1, noNaN: true }),
    (b, fillWaitMs, lambda, extra, lawShare) => {
      const bounds = { ...b, fillWaitMs };
      const law = lawShare * b.maxWaitMs;
      const w = entryWindow(lambda, law, bounds);
      assert.ok(w >= law && w <= b.maxWaitMs + 1e-12, `window ${w}`);
      assert.ok(entryWindow(lambda + extra, law, bounds) >= w);
      // Off (0) or no company expected within the fill: the law's window unchanged.
      assert.equal(entryWindow(lambda, law, { ...b, fillWaitMs: 0 }), law);
      const fill = Math.min(fillWaitMs, b.maxWaitMs);
      if (lambda * fill < 1) assert.equal(w, law);
    },
  ));
});

Deno.test("entryWindow(): a lone client whose latency exceeds the fill never waits", () => {
  const b = { ...bounds, maxWaitMs: 5, fillWaitMs: 1 };
  // One closed-loop client at 2 ms per request arrives at 0.5 per ms.
  assert.equal(entryWindow(0.5, 0, b), 0);
  assert.equal(targetBatchSize(0.5, entryWindow(0.5, 0, b), b), 1);
  // 32 clients on the same latency: 16 per ms, the fill applies and the target grows.
  assert.equal(entryWindow(16, 0, b), 1);
  assert.ok(targetBatchSize(16, 1, b) > 2);
});
