import assert from "node:assert/strict";
import fc from "fast-check";
import type { PartBatchStats } from "../batching/micro_batcher.ts";
import {
  BATCH_SIZE_BOUNDS,
  bucketIndex,
  formedBatchDistributions,
  queueDelayDistributions,
} from "./batch_distributions.ts";

function part(key: string, formedBatches: number[], extra: Partial<PartBatchStats> = {}) {
  const executions = formedBatches.reduce((a, b) => a + b, 0);
  return {
    part: key,
    formedBatches,
    executions,
    groups: formedBatches.reduce((sum, count, groups) => sum + count * groups, 0),
    rows: 0,
    queueDelayMsSum: 0,
    queueDelayMsMax: 0,
    busyWaitMsSum: 0,
    executionMsSum: 0,
    queuedGroups: 0,
    target: 1,
    arrivalPerS: 0,
    service: { fixedMs: 0, perRowMs: 0 },
    ...extra,
  } satisfies PartBatchStats;
}

Deno.test("bucketIndex() puts a value in the first bucket whose bound holds it", () => {
  assert.equal(bucketIndex(1, BATCH_SIZE_BOUNDS), 0);
  assert.equal(bucketIndex(2, BATCH_SIZE_BOUNDS), 1);
  assert.equal(bucketIndex(3, BATCH_SIZE_BOUNDS), 2);
  assert.equal(bucketIndex(64, BATCH_SIZE_BOUNDS), 6);
  assert.equal(bucketIndex(65, BATCH_SIZE_BOUNDS), 7);
});

Deno.test("formedBatchDistributions() sums parts per kind into size buckets", () => {
  const parts = [
    // L0/E1: 2 executions of 1 group, 1 of 3 groups; L1/E0: 1 of 100 groups.
    part("L0/E1", [0, 2, 0, 1]),
    part("L1/E0", Object.assign(new Array(101).fill(0), { 100: 1 })),
    part("L0/gate", [0, 5]),
  ];
  const [expert, gate, ...rest] = formedBatchDistributions(parts);
  assert.deepEqual(rest, []);
  assert.deepEqual(expert, {
    labels: { kind: "expert" },
    // ≤1: 2, (1,2]: 0, (2,4]: 1, …, >64: 1
    counts: [2, 0, 1, 0, 0, 0, 0, 1],
    sum: 2 + 3 + 100,
  });
  assert.deepEqual(gate, { labels: { kind: "gate" }, counts: [5, 0, 0, 0, 0, 0, 0, 0], sum: 5 });
});

Deno.test("formedBatchDistributions(): bucket total = executions and sum = groups, for any stats", () => {
  fc.assert(fc.property(
    fc.array(fc.array(fc.nat({ max: 50 }), { maxLength: 80 }), { minLength: 1, maxLength: 6 }),
    (batches) => {
      const parts = batches.map((formed, i) => part(`L${i}/E0`, formed));
      const [expert] = formedBatchDistributions(parts);
      const total = expert!.counts.reduce((a, b) => a + b, 0);
      assert.equal(total, parts.reduce((sum, p) => sum + p.executions, 0));
      assert.equal(expert!.sum, parts.reduce((sum, p) => sum + p.groups, 0));
    },
  ));
});

Deno.test("queueDelayDistributions() gives seconds summed and groups counted per kind", () => {
  const parts = [
    part("L0/E1", [0, 4], { queueDelayMsSum: 1500 }),
    part("L1/E2", [0, 0, 3], { queueDelayMsSum: 500 }),
    part("L0/S0", [0, 2], { queueDelayMsSum: 20 }),
  ];
  assert.deepEqual(queueDelayDistributions(parts), [
    { labels: { kind: "expert" }, counts: [10], sum: 2 },
    { labels: { kind: "shared" }, counts: [2], sum: 0.02 },
  ]);
});
