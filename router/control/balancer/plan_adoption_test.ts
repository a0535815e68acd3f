/** @module Adoption: an empty KV takes the newest plan the backends run, not a static one. */
import assert from "node:assert/strict";
import { type PlacementPlan, staticPlan } from "../../../shared/placement_plan.ts";
import {
  balancerFixture,
  INTERNAL_TOKEN,
  MODEL,
} from "../../../tests/_support/router/balancer_fixture.ts";
import { newestAdoptable } from "./plan_adoption.ts";
import { PlanClient } from "./plan_client.ts";
import { PlanStore } from "./plan_store.ts";

const A = "127.0.0.1:9001";
const B = "127.0.0.1:9002";
const BACKENDS = [{ id: A, url: `http://${A}` }, { id: B, url: `http://${B}` }];

function plan(version: number, options: Partial<PlacementPlan> = {}): PlacementPlan {
  return {
    ...staticPlan({
      model: MODEL.name,
      layers: MODEL.layers,
      experts: MODEL.experts,
      backends: BACKENDS,
      slotsPerBackend: 5,
      version,
      now: 1000,
    }),
    reason: `rebalance ${version}`,
    ...options,
  };
}

Deno.test("newestAdoptable() takes the highest usable version and drops live replica weights", () => {
  const weighted = plan(7);
  weighted.layers = weighted.layers.map((l) => ({ ...l, replicaWeights: l.phy2log.map(() => 2) }));
  const otherPool = plan(9, { backends: [BACKENDS[1]!, BACKENDS[0]!] });
  const otherModel = plan(8, { model: "n" });
  const adopted = newestAdoptable(
    [plan(3), null, weighted, otherPool, otherModel],
    MODEL,
    BACKENDS,
  );
  assert.equal(adopted?.version, 7);
  assert.ok(adopted!.layers.every((layer) => layer.replicaWeights === undefined));
  assert.deepEqual(adopted!.layers[0]!.phy2log, weighted.layers[0]!.phy2log);
  assert.equal(newestAdoptable([null, otherPool], MODEL, BACKENDS), null);
});

Deno.test("PlanStore.adopt() sets a plan current only when none is, and moves next_version up", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = new PlanStore(kv);
    assert.equal(await store.adopt(plan(7)), true);
    assert.equal(await store.currentVersion(MODEL.name), 7);
    assert.equal((await store.get(MODEL.name, 7))?.reason, "rebalance 7");
    assert.equal(await store.nextVersion(MODEL.name), 8);
    assert.equal(await store.adopt(plan(9)), false, "a current plan exists");
    assert.equal(await store.currentVersion(MODEL.name), 7);
    const follower = new PlanStore(kv, { fence: () => Promise.resolve(null) });
    assert.equal(await follower.adopt(plan(3, { model: "fresh" })), false, "not the leader");
    assert.equal(await store.currentVersion("fresh"), null);
  } finally {
    kv.close();
  }
});

Deno.test("with an empty KV the balancer adopts the backends' plan instead of placing a static one", async () => {
  await using f = await balancerFixture();
  // The pool runs version 5 (B) and 4 (A), from a router whose KV is gone.
  const client = new PlanClient({
    fetch: f.backends.fetch,
    clock: f.clock,
    internalToken: INTERNAL_TOKEN,
  });
  const five = plan(5);
  await client.stage(plan(4), [A]);
  await client.activate(plan(4), [A]);
  await client.stage(five, [B]);
  await client.activate(five, [B]);
  f.backends.calls.length = 0;

  const record = await f.balancer.tick();
  assert.equal(record.action, "adopt");
  assert.equal(record.outcome, "adopted");
  assert.equal(record.version, 5);
  assert.equal((await f.current())?.version, 5);
  assert.deepEqual(f.backends.trace(), [`GET /v2/plan/active @${A}`, `GET /v2/plan/active @${B}`]);
  assert.equal(f.logger.find("plan adopted").length, 1);
  // Reconciliation then puts A on 5; a later switch gets version 6.
  const results = await f.balancer.reconcile([
    { backend: A, active: 4, staged: null },
    { backend: B, active: 5, staged: null },
  ]);
  assert.deepEqual(results.map((r) => [r.backend, r.outcome]), [[A, "reconciled"]]);
  assert.equal(f.backends.state.get(A)!.active, 5);
  assert.equal(await f.store.nextVersion(MODEL.name), 6);
});

Deno.test("with an empty KV and backends without a plan the static plan is placed as before", async () => {
  await using f = await balancerFixture();
  const record = await f.balancer.tick();
  assert.equal(record.action, "initial");
  assert.equal(record.version, 1);
});
