/**
 * @module "Stage now, activate at the event": `stagePlan()` leaves a version staged and not
 * current; `Balancer.activateStaged()` claims and activates it later, in turn with ticks,
 * with the backends that join for it moved into the pool first.
 */
import assert from "node:assert/strict";
import type { PlanBackend } from "../../../shared/placement_plan.ts";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { FakePlanBackends } from "../../../tests/_support/router/fake_plan_backends.ts";
import { MODEL, UNIFORM } from "../../../tests/_support/router/balancer_fixture.ts";
import { Balancer } from "./balancer.ts";
import { BalancerError } from "./balancer_types.ts";
import { PlanClient } from "./plan_client.ts";
import { PlanStore } from "./plan_store.ts";
import { stagePlan } from "./plan_switch.ts";
import { proposePlacement } from "./rebalancer.ts";

const A = "127.0.0.1:9001";
const B = "127.0.0.1:9002";
const C = "127.0.0.1:9003";

async function setUp() {
  const kv = await Deno.openKv(":memory:");
  const store = new PlanStore(kv);
  const clock = new ManualClock();
  const logger = new MemoryLogger();
  const fakes = new FakePlanBackends([A, B, C]);
  const client = new PlanClient({ fetch: fakes.fetch, clock });
  // The pool: A and B serve; C is a standby backend until the plan for three activates.
  const members: PlanBackend[] = fakes.backends().slice(0, 2);
  const balancer = new Balancer({
    store,
    client,
    logger,
    clock,
    settings: {
      enabled: true,
      strategy: "dynamic",
      threshold: 0.75,
      adjust_interval: 60_000,
      redundancy: 0.25,
    },
    loadSource: () => UNIFORM,
    backends: () => [...members],
    modelShape: () => MODEL,
  });
  const deps = { store, client, clock, logger };
  const forThree = proposePlacement(UNIFORM, {
    model: MODEL,
    backends: fakes.backends(),
    redundancy: 0.25,
    reason: "prewarm: event placement for 3 backends",
  });
  return {
    kv,
    store,
    fakes,
    members,
    balancer,
    deps,
    forThree,
    [Symbol.asyncDispose]: async () => {
      await balancer.stop();
      kv.close();
    },
  };
}

Deno.test("stagePlan() stages a version on every backend of the plan without making it current or active", async () => {
  await using t = await setUp();
  await t.balancer.tick(); // the static plan, version 1, on A and B
  const staged = await stagePlan(t.forThree, t.deps);
  assert.equal(staged.kind, "staged");
  assert.equal(staged.plan.version, 2);
  assert.equal((await t.store.current(MODEL.name))?.version, 1);
  for (const id of [A, B]) assert.deepEqual(pick(t.fakes.state.get(id)!), [1, 2]);
  assert.deepEqual(pick(t.fakes.state.get(C)!), [null, 2]);
  // A tick in between keeps the pool's plan: A and B still run version 1.
  const record = await t.balancer.tick();
  assert.equal(record.outcome, "kept");
  assert.equal(t.fakes.calls.filter((c) => c.path === "/v2/plan/activate").length, 2);
});

Deno.test("Balancer.activateStaged() moves the standby backend in, claims, activates and releases the staged version", async () => {
  await using t = await setUp();
  await t.balancer.tick();
  const staged = await stagePlan(t.forThree, t.deps);
  assert.equal(staged.kind, "staged");
  // Backend A restarted meanwhile: it lost the staged version and is staged again.
  t.fakes.restart(A);
  const result = await t.balancer.activateStaged(staged.plan, {
    beforeClaim: () => t.members.push(t.fakes.backends()[2]!),
  });
  assert.equal(result.version, 2);
  assert.deepEqual(result.pendingActivation, []);
  assert.equal((await t.store.current(MODEL.name))?.version, 2);
  for (const id of [A, B, C]) assert.equal(t.fakes.state.get(id)!.active, 2);
  assert.ok(t.fakes.trace().includes(`POST /v2/plan/release @${C}`));
  const stagedAgain = t.fakes.calls.filter((c) => c.path === "/v2/plan" && c.version === 2);
  assert.deepEqual(stagedAgain.map((c) => c.backend).sort(), [A, A, B, C]);
  const [decision] = t.balancer.decisions();
  assert.equal(decision!.action, "activate_staged");
  assert.equal(decision!.trigger, "prewarm");
  assert.equal(decision!.outcome, "switched");
});

Deno.test("Balancer.activateStaged() refuses a plan whose backends are not the pool's, and changes nothing", async () => {
  await using t = await setUp();
  await t.balancer.tick();
  const staged = await stagePlan(t.forThree, t.deps);
  assert.equal(staged.kind, "staged");
  await assert.rejects(
    () => t.balancer.activateStaged(staged.plan),
    (error: unknown) =>
      error instanceof BalancerError && error.kind === "conflict" &&
      error.message.includes(`the pool has "${A}", "${B}"`),
  );
  assert.equal((await t.store.current(MODEL.name))?.version, 1);
});

function pick(state: { active: number | null; staged: number | null }) {
  return [state.active, state.staged];
}
