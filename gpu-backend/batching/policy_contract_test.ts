/**
 * One contract over every `BatchPolicy` (adaptive, fixed-size, fixed-delay, and what
 * `policyByName` parses): what the batch queues rely on, whatever the policy.
 */
import assert from "node:assert/strict";
import type { BatchBounds, Capacity, QueueLoad } from "./control_law.ts";
import {
  adaptivePolicy,
  type BatchPolicy,
  fixedDelayPolicy,
  fixedSizePolicy,
  policyByName,
  type QueueView,
} from "./policies.ts";

const BOUNDS: BatchBounds = { min: 2, max: 16, maxWaitMs: 8, latencyBudgetMs: 50 };
const CAPACITY: Capacity = { slots: 1, hostMsPerExecution: 0.2 };
const load = (arrivalPerMs: number): QueueLoad => ({
  arrivalPerMs,
  meanRows: 2,
  serviceMs: (rows) => 1 + 0.05 * rows,
});

const POLICIES: Array<[string, () => BatchPolicy]> = [
  ["adaptive", () => adaptivePolicy(BOUNDS)],
  ["fixed-1", () => fixedSizePolicy(1)],
  ["fixed-8", () => fixedSizePolicy(8, 20)],
  ["delay-4ms", () => fixedDelayPolicy(16, 4)],
  ["policyByName(adaptive)", () => policyByName("adaptive", BOUNDS)],
  ["policyByName(fixed-4)", () => policyByName("fixed-4", BOUNDS)],
  ["policyByName(delay-2.5ms)", () => policyByName("delay-2.5ms", BOUNDS)],
];

for (const [label, make] of POLICIES) {
  Deno.test(`batch policy contract (${label}): bounds, windows and targets stay in range under any load`, () => {
    const policy = make();
    assert.ok(policy.name.length > 0);
    assert.ok(Number.isInteger(policy.maxGroups) && policy.maxGroups >= 1);
    assert.ok(policy.maxWaitMs >= 0 && Number.isFinite(policy.maxWaitMs));
    for (const rate of [0, 0.001, 0.1, 1, 50]) {
      policy.plan([load(rate), load(rate / 2)], CAPACITY);
      const window = policy.windowMs();
      assert.ok(
        window >= 0 && window <= policy.maxWaitMs,
        `${label}: window ${window} at ${rate}/ms`,
      );
      for (const entry of [false, true]) {
        const queue: QueueView = { ...load(rate), groups: 3, headWaitMs: 0, entry };
        const target = policy.target(queue);
        assert.ok(target >= 1 && target <= policy.maxGroups, `${label}: target ${target}`);
        const own = policy.queueWindow?.(queue) ?? window;
        assert.ok(own >= 0 && own <= policy.maxWaitMs, `${label}: queue window ${own}`);
      }
    }
  });

  Deno.test(`batch policy contract (${label}): an empty queue never dispatches; a full one or an expired head always does`, () => {
    const policy = make();
    policy.plan([load(0.5)], CAPACITY);
    const empty = policy.decide({ groups: 0, headWaitMs: 100 }, 4);
    assert.equal(empty.dispatch, false);
    const target = policy.target({ ...load(0.5), groups: 1, headWaitMs: 0 });
    assert.deepEqual(policy.decide({ groups: target, headWaitMs: 0 }, target), { dispatch: true });
    assert.deepEqual(
      policy.decide({ groups: 1, headWaitMs: policy.maxWaitMs }, Math.max(2, target)),
      { dispatch: true },
      `${label}: a head that waited maxWaitMs goes`,
    );
    const waiting = policy.decide({ groups: 1, headWaitMs: 0 }, policy.maxGroups + 1);
    if (!waiting.dispatch) {
      assert.ok(
        waiting.waitMs > 0 && waiting.waitMs <= policy.maxWaitMs,
        `${label}: waits at most maxWaitMs`,
      );
    }
  });
}

Deno.test("policyByName() refuses an unknown policy, naming the forms it takes", () => {
  assert.throws(() => policyByName("greedy", BOUNDS), /adaptive, fixed-N or delay-Dms/);
});
