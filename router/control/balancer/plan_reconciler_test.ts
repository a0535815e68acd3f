/** @module PlanReconciler: backends off the current plan are brought back, with backoff. */
import assert from "node:assert/strict";
import type { PlacementPlan } from "../../../shared/placement_plan.ts";
import { balancerFixture } from "../../../tests/_support/router/balancer_fixture.ts";
import { planMismatches, reportedPlans } from "./plan_reconciler.ts";

const A = "127.0.0.1:9001";
const B = "127.0.0.1:9002";

function reported(
  f: { backends: { state: Map<string, { active: number | null; staged: number | null }> } },
) {
  return [...f.backends.state.entries()].map(([backend, s]) => ({
    backend,
    active: s.active,
    staged: s.staged,
  }));
}

Deno.test("planMismatches() lists the plan's backends that report another active version", () => {
  const plan = {
    model: "m",
    version: 7,
    backends: [{ id: A, url: `http://${A}` }, { id: B, url: `http://${B}` }],
  } as PlacementPlan;
  assert.deepEqual(
    planMismatches(plan, [
      { backend: A, active: 7, staged: 7 },
      { backend: B, active: null, staged: null },
      { backend: "elsewhere", active: null, staged: null },
    ]),
    [{ backend: B, active: null, staged: null }],
  );
  assert.deepEqual(planMismatches(plan, [{ backend: A, active: 6, staged: 7 }]), [
    { backend: A, active: 6, staged: 7 },
  ]);
});

Deno.test("reportedPlans() keeps fresh backends whose reports carry a plan", () => {
  assert.deepEqual(
    reportedPlans([
      { name: "a", stale: false, plan: { active: 3, staged: null } },
      { name: "b", stale: true, plan: { active: null, staged: null } },
      { name: "c", stale: false, plan: undefined },
    ]),
    [{ backend: "a", active: 3, staged: null }],
  );
});

Deno.test("a restarted backend is staged and activated on the current plan; the other is left alone", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  assert.equal((await f.current())?.version, 1);
  f.backends.restart(B);
  f.backends.calls.length = 0;
  const results = await f.balancer.reconcile(reported(f));
  assert.deepEqual(results, [{ backend: B, version: 1, was: null, outcome: "reconciled" }]);
  assert.deepEqual(f.backends.trace(), [
    `GET /v2/plan @${B}`,
    `PUT /v2/plan @${B}`,
    `POST /v2/plan/activate @${B}`,
    `POST /v2/plan/release @${B}`,
  ]);
  assert.equal(f.backends.state.get(B)!.active, 1);
  assert.deepEqual(f.reconciler.counts, { reconciled: 1, failed: 0 });
  const [line] = f.logger.find("plan reconciled");
  assert.equal(line?.fields["backend"], B);
  assert.equal(line?.fields["version"], 1);
  // In line now: nothing more is sent.
  f.backends.calls.length = 0;
  assert.deepEqual(await f.balancer.reconcile(reported(f)), []);
  assert.deepEqual(f.backends.trace(), []);
});

Deno.test("a stale report is checked with the backend first: no stage when it is already current", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  f.backends.calls.length = 0;
  const results = await f.balancer.reconcile([{ backend: A, active: null, staged: null }]);
  assert.deepEqual(results, [{ backend: A, version: 1, was: null, outcome: "already" }]);
  assert.deepEqual(f.backends.trace(), [`GET /v2/plan @${A}`]);
  assert.deepEqual(f.reconciler.counts, { reconciled: 0, failed: 0 });
});

Deno.test("a failing backend is retried after a backoff that doubles, then reconciled", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  f.backends.restart(A);
  f.backends.failStage.add(A);
  const first = await f.balancer.reconcile(reported(f));
  assert.equal(first[0]?.outcome, "failed");
  assert.match(first[0]!.error!, /Cannot load experts/);
  // Within the 2 s backoff nothing is tried.
  f.backends.calls.length = 0;
  await f.clock.advance(1999);
  assert.deepEqual(await f.balancer.reconcile(reported(f)), []);
  assert.deepEqual(f.backends.trace(), []);
  await f.clock.advance(1);
  assert.equal((await f.balancer.reconcile(reported(f)))[0]?.outcome, "failed");
  // The second failure waits 4 s.
  f.backends.failStage.delete(A);
  await f.clock.advance(3999);
  assert.deepEqual(await f.balancer.reconcile(reported(f)), []);
  await f.clock.advance(1);
  assert.equal((await f.balancer.reconcile(reported(f)))[0]?.outcome, "reconciled");
  assert.equal(f.backends.state.get(A)!.active, 1);
  assert.deepEqual(f.reconciler.counts, { reconciled: 1, failed: 2 });
  assert.equal(f.logger.find("plan reconciliation failed").length, 2);
});

Deno.test("nothing is reconciled without a current plan or with the balancer off", async () => {
  await using none = await balancerFixture();
  assert.deepEqual(await none.balancer.reconcile(reported(none)), []);
  assert.deepEqual(none.backends.trace(), []);
  await using off = await balancerFixture({ strategy: "off" });
  await off.store.save({
    model: "m",
    version: 1,
    createdAt: 0,
    reason: "test",
    backends: off.backends.backends(),
    slotsPerBackend: 5,
    layers: [{ phy2log: [0, 1, 2, 3, 4, 5, 6, 7, 0, 1] }, {
      phy2log: [0, 1, 2, 3, 4, 5, 6, 7, 0, 1],
    }],
  });
  await off.store.setCurrent("m", 1, null);
  assert.deepEqual(await off.balancer.reconcile(reported(off)), []);
  assert.deepEqual(off.backends.trace(), []);
});
