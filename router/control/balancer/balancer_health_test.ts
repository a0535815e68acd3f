/** @module The Balancer's placement choice and its EPLB health (due, held, durations, moves). */
import assert from "node:assert/strict";
import { balancerFixture, HOT, UNIFORM } from "../../../tests/_support/router/balancer_fixture.ts";
import { assumedCosts } from "../load/cost_window.ts";
import { STALL_INTERVALS } from "./rebalance_health.ts";

const MIB = 1048576;
const A = "127.0.0.1:9001";
const B = "127.0.0.1:9002";

Deno.test("Balancer with placement auto starts with full replication and says why", async () => {
  const budgets = new Map([[A, { budgetBytes: null, expertBytes: MIB }], [B, {
    budgetBytes: null,
    expertBytes: MIB,
  }]]);
  await using f = await balancerFixture({ placement: "auto" }, { budgets, costs: assumedCosts });
  const record = await f.balancer.tick();
  assert.equal(record.action, "initial");
  assert.equal(record.outcome, "switched");
  assert.equal(record.placement?.choice, "full_replication");
  assert.equal(record.placement?.remoteRowSource, "assumed");
  // 2 layers × 8 experts on each of 2 backends, 1 MiB each.
  assert.equal(record.moved, 32);
  assert.equal(record.bytes, 32 * MIB);
  const plan = await f.current();
  assert.equal(plan?.slotsPerBackend, 8);
  assert.match(plan!.reason, /^initial: no plan yet: full replication: every backend fits/);
  for (const state of f.backends.state.values()) assert.equal(state.loaded.size, 16);
  const placement = f.balancer.placement()!;
  assert.equal(placement.choice, "full_replication");
  assert.equal(placement.inputs.remoteRow.source, "assumed");
  // Health: one switch, done at once (every backend active), 32 MiB moved.
  const health = f.balancer.health();
  assert.deepEqual(health.outcomes, [{ outcome: "switched", trigger: "balancer", count: 1 }]);
  assert.equal(health.durations.count, 1);
  assert.deepEqual(health.moved, { experts: 32, bytes: 32 * MIB });
  assert.equal(health.lastSwitchAt, f.clock.now());
  assert.deepEqual(f.balancer.switchDurationsSince(0).values, [0]);
  assert.deepEqual(f.balancer.switchDurationsSince(1).values, []);
  // Full replication is balanced under any load: nothing is ever due.
  f.load.current = HOT;
  assert.equal((await f.balancer.tick()).action, "none");
  assert.equal(f.balancer.health().due, null);
});

Deno.test("Balancer with placement auto waits for budgets first, then keeps expert parallelism when they are too small", async () => {
  const tight = new Map([[A, { budgetBytes: 10 * MIB, expertBytes: MIB }]]);
  await using f = await balancerFixture({ placement: "auto" }, { budgets: tight });
  const waiting = await f.balancer.tick();
  assert.equal(waiting.action, "none");
  assert.match(waiting.reason, /waiting for every backend's memory budget/);
  tight.set(B, { budgetBytes: 10 * MIB, expertBytes: MIB });
  const record = await f.balancer.tick();
  assert.equal(record.action, "initial");
  assert.equal(record.placement?.choice, "expert_parallel");
  assert.equal((await f.current())?.slotsPerBackend, 5);
  assert.match(f.balancer.placement()!.reason, /holds 5 of 8 experts per layer/);
});

Deno.test("a due rebalance held by a pin is reported, and stalled after STALL_INTERVALS × adjust_interval", async () => {
  await using f = await balancerFixture({ adjust_interval: 10_000 });
  await f.balancer.tick();
  await f.balancer.pin(1);
  f.load.current = HOT;
  await f.balancer.tick();
  const due = f.balancer.health().due!;
  assert.equal(due.reason, "pinned");
  assert.equal(due.threshold, 0.75);
  assert.ok(due.worst < 0.75);
  assert.equal(due.stalled, false);
  await f.clock.advance(STALL_INTERVALS * 10_000 + 1);
  await f.balancer.tick();
  const later = f.balancer.health().due!;
  assert.equal(later.since, due.since);
  assert.equal(later.stalled, true);
  assert.equal(f.balancer.health().stallAfterMs, 30_000);
  // Balanced again: not due any more.
  f.load.current = UNIFORM;
  await f.balancer.unpin();
  await f.balancer.tick();
  assert.equal(f.balancer.health().due, null);
});

Deno.test("a due rebalance whose staging fails says so; the switch that follows ends it", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  f.load.current = HOT;
  await f.balancer.tick();
  assert.equal(f.balancer.health().due?.reason, "confirming");
  f.backends.failStage.add(B);
  await f.balancer.tick();
  const due = f.balancer.health().due!;
  assert.equal(due.reason, "staging_failed");
  assert.match(due.detail, /Cannot stage plan version 2/);
  f.backends.failStage.clear();
  await f.balancer.tick();
  assert.equal(f.balancer.health().due, null);
  const outcomes = f.balancer.health().outcomes.map((o) => `${o.outcome}:${o.count}`).sort();
  assert.deepEqual(outcomes, ["stage_failed:1", "switched:2"]);
});
