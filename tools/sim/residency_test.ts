import assert from "node:assert/strict";
import type { PlacementPlan } from "../../shared/placement_plan.ts";
import { Residency } from "./residency.ts";

const backends = [{ id: "a", url: "sim://a" }, { id: "b", url: "sim://b" }];
const plan = (phy2log: number[]): PlacementPlan => ({
  model: "m",
  version: 1,
  createdAt: 0,
  reason: "test",
  backends,
  slotsPerBackend: 2,
  layers: [{ phy2log }],
});

/** Two accelerators of 3 experts (1 spare each) holding `plan`; 100 bytes at 10 per ms. */
function installed(plan: PlacementPlan): Residency {
  const residency = new Residency({
    devices: 2,
    experts: 4,
    capacity: 3,
    expertBytes: 100,
    loadBytesPerMs: 10,
  });
  residency.install(plan);
  return residency;
}

Deno.test("Residency: free memory stages in the background, the rest loads at activation", () => {
  const before = plan([0, 1, 2, 3]);
  const residency = installed(before);
  // Backend a swaps both experts for 2 and 3: one fits in its free slot, one must wait.
  const after = plan([2, 3, 0, 1]);
  const cost = residency.cost(before, after);
  assert.deepEqual(cost.background, [1, 1]);
  assert.deepEqual(cost.overflow, [1, 1]);
  assert.equal(cost.loads, 4);
  assert.equal(cost.bytes, 400);
  assert.equal(cost.backgroundMs, 10);
  assert.equal(cost.activationMs, 10);
  // Synchronous: everything on the critical path.
  assert.deepEqual(residency.cost(before, after, true).overflow, [2, 2]);
  assert.equal(residency.activate(after), 4);
  assert.ok(residency.has(0, 0, 2) && residency.has(0, 0, 3));
  assert.ok(residency.residentCount(0) <= 3);
  // Switching back costs loads again only for what was evicted.
  assert.equal(residency.cost(after, before).loads, 4 - (3 - 2) * 2);
});

Deno.test("Residency: warming loads into free memory, never evicts the serving plan, and saves the switch's loads", () => {
  const before = plan([0, 1, 2, 3]);
  const residency = installed(before);
  // Backend a serves 0 and 1 and has one free slot: 2 loads, 3 is skipped (0, 1 are pinned).
  assert.deepEqual(residency.warm(before, 0, [2, 3]), { loaded: [2], already: [], skipped: [3] });
  assert.deepEqual(residency.warm(before, 0, [0]), { loaded: [], already: [0], skipped: [] });
  // A later warm may replace an earlier warmed expert the plan does not serve.
  assert.deepEqual(residency.warm(before, 0, [3]), { loaded: [3], already: [], skipped: [] });
  assert.ok(!residency.has(0, 0, 2) && residency.has(0, 0, 3) && residency.has(0, 0, 0));
  // Switching a to {3, 0}: 3 is already resident, nothing loads on a.
  const after = plan([3, 0, 2, 1]);
  assert.deepEqual(residency.cost(before, after).background, [0, 1]);
  assert.deepEqual(residency.cost(before, after).overflow, [0, 0]);
});
