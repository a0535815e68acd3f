/**
 * @module Tests of the greedy baseline against DeepSeek EPLB's published example and
 * hand-checked small cases.
 */
import assert from "node:assert/strict";
import { balancedPacking, greedyPlacement, replicateExperts } from "./eplb_greedy.ts";

Deno.test("greedyPlacement() reproduces DeepSeek EPLB's README example (hierarchical)", () => {
  const plan = greedyPlacement({
    weight: [
      [90, 132, 40, 61, 104, 165, 39, 4, 73, 56, 183, 86],
      [20, 107, 104, 64, 19, 197, 187, 157, 172, 86, 16, 27],
    ],
    num_replicas: 16,
    num_groups: 4,
    num_nodes: 2,
    num_gpus: 8,
  });
  assert.deepEqual(plan.phy2log, [
    [5, 6, 5, 7, 8, 4, 3, 4, 10, 9, 10, 2, 0, 1, 11, 1],
    [7, 10, 6, 8, 6, 11, 8, 9, 2, 4, 5, 1, 5, 0, 3, 1],
  ]);
  assert.deepEqual(plan.logcnt[0], [1, 2, 1, 1, 2, 2, 1, 1, 1, 1, 2, 1]);
  assert.deepEqual(plan.log2phy[0]![5], [0, 2]);
  assert.deepEqual(plan.log2phy[0]![0], [12, -1]);
});

Deno.test("replicateExperts() gives each extra replica to the highest load per replica", () => {
  const { phy2log, phyrank, logcnt } = replicateExperts([10, 1, 1, 1], 6);
  assert.deepEqual(phy2log, [0, 1, 2, 3, 0, 0]);
  assert.deepEqual(phyrank, [0, 0, 0, 0, 1, 2]);
  assert.deepEqual(logcnt, [3, 1, 1, 1]);
});

Deno.test("balancedPacking() puts the heaviest item first into the lightest pack with room", () => {
  const { packIndex, rankInPack } = balancedPacking([5, 4, 3, 3, 2, 1], 2);
  // 5→0, 4→1, 3→1 (4 < 5), 3→0 (5 < 7), 2→1 (7 < 8), 1→0 (pack 1 is full)
  const loads = [0, 0];
  packIndex.forEach((pack, item) => loads[pack]! += [5, 4, 3, 3, 2, 1][item]!);
  assert.deepEqual(packIndex, [0, 1, 1, 0, 1, 0]);
  assert.deepEqual(rankInPack, [0, 0, 1, 1, 2, 2]);
  assert.deepEqual(loads, [9, 9]);
});

Deno.test("greedyPlacement() on loads [10, 1, 1, 1] with 6 slots on 2 GPUs triples the hot expert", () => {
  const plan = greedyPlacement({
    weight: [[10, 1, 1, 1]],
    num_replicas: 6,
    num_groups: 1,
    num_nodes: 1,
    num_gpus: 2,
  });
  assert.deepEqual(plan.logcnt, [[3, 1, 1, 1]]);
  assert.deepEqual(plan.phy2log, [[0, 0, 3, 0, 1, 2]]);
  assert.deepEqual(plan.log2phy, [[[0, 3, 1], [4, -1, -1], [5, -1, -1], [2, -1, -1]]]);
  assertClose(plan.gpuLoad[0]!, [23 / 3, 16 / 3]);
  assertClose(plan.balancedness, [6.5 / (23 / 3)]);
});

function assertClose(actual: readonly number[], expected: readonly number[]): void {
  assert.equal(actual.length, expected.length);
  actual.forEach((value, i) =>
    assert.ok(Math.abs(value - expected[i]!) < 1e-9, `${value} ≠ ${expected[i]}`)
  );
}
