/** @module Balancer: ticks against fake plan backends, switches, failures and admin actions. */
import assert from "node:assert/strict";
import { hostedExperts } from "../../../shared/placement_plan.ts";
import { BalancerError } from "./balancer_types.ts";
import { modelShapeFromMetadata } from "./rebalancer.ts";
import {
  balancerFixture,
  HOT,
  INTERNAL_TOKEN,
  MODEL,
} from "../../../tests/_support/router/balancer_fixture.ts";
import { PlanStageError } from "./plan_client.ts";

const A = "127.0.0.1:9001";
const B = "127.0.0.1:9002";

/** The calls of one version in order, as `METHOD path @backend`, sorted within each step. */
function steps(
  trace: { method: string; path: string; backend: string; version: number | null }[],
  version: number,
) {
  const phase = (path: string) =>
    ["/v2/plan", "/v2/plan/activate", "/v2/plan/release"].indexOf(path);
  const calls = trace.filter((call) => call.version === version);
  // Every call of one step comes before any call of the next.
  calls.forEach((call, i) => {
    if (i > 0) assert.ok(phase(calls[i - 1]!.path) <= phase(call.path), "steps interleave");
  });
  return calls.map((call) => `${call.method} ${call.path} @${call.backend}`).sort((x, y) =>
    phase(x.split(" ")[1]!) - phase(y.split(" ")[1]!) || x.localeCompare(y)
  );
}

Deno.test("Balancer.tick() places the static plan first: stage, activate, release", async () => {
  await using f = await balancerFixture();
  const record = await f.balancer.tick();
  assert.equal(record.action, "initial");
  assert.equal(record.outcome, "switched");
  assert.equal(record.version, 1);
  assert.deepEqual(steps(f.backends.calls, 1), [
    `PUT /v2/plan @${A}`,
    `PUT /v2/plan @${B}`,
    `POST /v2/plan/activate @${A}`,
    `POST /v2/plan/activate @${B}`,
    `POST /v2/plan/release @${A}`,
    `POST /v2/plan/release @${B}`,
  ]);
  const current = await f.current();
  assert.equal(current?.version, 1);
  assert.match(
    current!.reason,
    /^initial: no plan yet: static placement \(expert parallelism: expert_balancer.placement is expert_parallel\)$/,
  );
  assert.equal(current?.createdAt, f.clock.now());
  for (const state of f.backends.state.values()) {
    assert.equal(state.active, 1);
    assert.ok(state.authorizations.every((value) => value === `Bearer ${INTERNAL_TOKEN}`));
  }
  assert.equal(f.logger.find("plan switched").length, 1);
  // The token never reaches the logs.
  assert.ok(!JSON.stringify(f.logger.records).includes(INTERNAL_TOKEN));
});

Deno.test("Balancer.tick() keeps a balanced plan and logs why at debug level", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  const calls = f.backends.calls.length;
  const record = await f.balancer.tick();
  assert.equal(record.action, "none");
  assert.equal(record.outcome, "kept");
  assert.match(record.reason, /balancedness 0\.889 ≥ threshold 0\.750 \(version 1\)/);
  assert.equal(f.backends.calls.length, calls);
  const last = f.logger.find("balancer decision").at(-1)!;
  assert.equal(last.level, "debug");
  assert.equal(last.fields["reason"], record.reason);
});

Deno.test("Balancer.tick() rebalances a hot expert onto both backends", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  f.load.current = HOT;
  assert.equal((await f.balancer.tick()).action, "none", "confirming (hysteresis)");
  const record = await f.balancer.tick();
  assert.equal(record.action, "rebalance");
  assert.equal(record.outcome, "switched");
  assert.equal(record.version, 2);
  assert.ok(record.after! > record.before!);
  assert.ok(record.moved! > 0);
  assert.deepEqual(steps(f.backends.calls, 2), [
    `PUT /v2/plan @${A}`,
    `PUT /v2/plan @${B}`,
    `POST /v2/plan/activate @${A}`,
    `POST /v2/plan/activate @${B}`,
    `POST /v2/plan/release @${A}`,
    `POST /v2/plan/release @${B}`,
  ]);
  const current = (await f.current())!;
  assert.equal(current.version, 2);
  for (const [id, state] of f.backends.state) {
    assert.equal(state.active, 2);
    assert.ok(hostedExperts(current, id)[0]!.includes(2), `${id} hosts the hot expert`);
    // After release a backend holds exactly what version 2 puts there.
    const expected = hostedExperts(current, id).flatMap((experts, layer) =>
      experts.map((expert) => `L${layer}/E${expert}`)
    );
    assert.deepEqual([...state.loaded].sort(), expected.sort());
  }
  // Balanced now: the next tick keeps it.
  assert.equal((await f.balancer.tick()).action, "none");
});

Deno.test("a stage failure on one backend keeps the old plan and activates nothing", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  f.load.current = HOT;
  assert.equal((await f.balancer.tick()).action, "none", "confirming (hysteresis)");
  f.backends.failStage.add(B);
  const record = await f.balancer.tick();
  assert.equal(record.action, "rebalance");
  assert.equal(record.outcome, "stage_failed");
  assert.equal(record.version, 2);
  assert.match(
    record.error!,
    /Cannot stage plan version 2: failed on "127\.0\.0\.1:9002" \(HTTP 500: Cannot load experts: out of memory\)/,
  );
  assert.equal((await f.current())?.version, 1);
  assert.deepEqual(
    f.backends.calls.filter((call) => call.version === 2).map((call) => call.path),
    ["/v2/plan", "/v2/plan"],
  );
  for (const state of f.backends.state.values()) assert.equal(state.active, 1);
  const warn = f.logger.records.find((r) => r.level === "warn" && r.msg === "balancer decision");
  assert.equal(warn?.fields["outcome"], "stage_failed");
  // Once the backend recovers, the next tick switches.
  f.backends.failStage.clear();
  const retry = await f.balancer.tick();
  assert.equal(retry.outcome, "switched");
  assert.equal((await f.current())?.version, 3);
});

Deno.test("an activation failure switches, skips release and retries on the next tick", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  f.load.current = HOT;
  assert.equal((await f.balancer.tick()).action, "none", "confirming (hysteresis)");
  f.backends.failActivate.add(B);
  const record = await f.balancer.tick();
  assert.equal(record.outcome, "activate_partial");
  assert.equal((await f.current())?.version, 2);
  assert.equal(f.backends.state.get(A)!.active, 2);
  assert.equal(f.backends.state.get(B)!.active, 1);
  assert.ok(!f.backends.calls.some((c) => c.version === 2 && c.path === "/v2/plan/release"));
  f.backends.failActivate.clear();
  const next = await f.balancer.tick();
  assert.equal(next.action, "none");
  assert.equal(f.backends.state.get(B)!.active, 2);
  const retried = f.backends.calls.filter((c) => c.version === 2).slice(-3);
  assert.deepEqual(retried.map((c) => `${c.path} @${c.backend}`), [
    `/v2/plan/activate @${B}`,
    `/v2/plan/release @${A}`,
    `/v2/plan/release @${B}`,
  ]);
});

Deno.test("a backend that lost the staged plan is staged again before activation", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  f.load.current = HOT;
  assert.equal((await f.balancer.tick()).action, "none", "confirming (hysteresis)");
  f.backends.failActivate.add(B);
  await f.balancer.tick();
  // The backend restarts: nothing staged any more.
  f.backends.failActivate.clear();
  f.backends.state.get(B)!.staged = null;
  await f.balancer.tick();
  assert.equal(f.backends.state.get(B)!.active, 2);
  const retried = f.backends.calls.filter((c) => c.version === 2 && c.backend === B).slice(-4);
  assert.deepEqual(retried.map((c) => c.path), [
    "/v2/plan/activate",
    "/v2/plan",
    "/v2/plan/activate",
    "/v2/plan/release",
  ]);
});

Deno.test("Balancer.tick() does nothing while pinned", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  await f.store.pin(MODEL.name, 1);
  f.load.current = HOT;
  const calls = f.backends.calls.length;
  const record = await f.balancer.tick();
  assert.equal(record.action, "none");
  assert.equal(record.reason, "pinned to version 1");
  assert.equal(f.backends.calls.length, calls);
});

Deno.test("a router that loses the race to switch activates nothing", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  f.load.current = HOT;
  assert.equal((await f.balancer.tick()).action, "none", "confirming (hysteresis)");
  let raced = false;
  let other = 0;
  // Another router switches from version 1 while this one stages its plan.
  f.backends.beforeCall = async (call) => {
    if (raced || call.path !== "/v2/plan") return;
    raced = true;
    other = await f.store.nextVersion(MODEL.name);
    await f.store.save({ ...(await f.current())!, version: other });
    assert.equal(await f.store.setCurrent(MODEL.name, other, 1), true);
  };
  const record = await f.balancer.tick();
  assert.equal(record.action, "rebalance");
  assert.equal(record.outcome, "conflict");
  assert.equal(record.version, 2);
  assert.equal(await f.store.currentVersion(MODEL.name), other);
  const ours = f.backends.calls.filter((c) => c.version === 2).map((c) => c.path);
  assert.deepEqual(ours, ["/v2/plan", "/v2/plan"]);
  for (const state of f.backends.state.values()) assert.equal(state.active, 1);
});

Deno.test("Balancer.start() ticks now and every adjust_interval until stop()", async () => {
  await using f = await balancerFixture({ adjust_interval: 5_000 });
  f.balancer.start();
  await f.clock.settle();
  await f.clock.settle();
  assert.equal(f.balancer.decisions().length, 1);
  await f.clock.advance(5_000);
  await f.clock.settle();
  assert.equal(f.balancer.decisions().length, 2);
  await f.clock.advance(5_000);
  await f.clock.settle();
  assert.equal(f.balancer.decisions().length, 3);
  await f.balancer.stop();
  assert.equal(f.clock.pendingTimers, 0);
  await f.clock.advance(20_000);
  assert.equal(f.balancer.decisions().length, 3);
});

Deno.test("Balancer keeps the last decisions, newest first", async () => {
  await using f = await balancerFixture({}, { decisionsKept: 3 });
  for (let i = 0; i < 5; i++) await f.balancer.tick();
  const decisions = f.balancer.decisions();
  assert.equal(decisions.length, 3);
  assert.ok(decisions.every((d) => d.action === "none"));
});

Deno.test("Balancer.apply() switches to an operator's phy2log and rejects a bad one", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  await assert.rejects(
    () => f.balancer.apply({ phy2log: [[0, 1, 2], [0, 1, 2]] }),
    (error) =>
      error instanceof BalancerError && error.kind === "invalid" &&
      /phy2log\[0\] has 3 slots, not a positive multiple of the 2 backends/.test(error.message),
  );
  await assert.rejects(
    () => f.balancer.apply({ phy2log: [[0, 1, 2, 3, 4, 5, 6, 7], [0, 1, 2, 3, 4, 5, 6, 6]] }),
    /Cannot apply plan: phy2log\[1\] places no replica of expert 7/,
  );
  const phy2log = [[7, 6, 5, 4, 3, 2, 1, 0], [0, 1, 2, 3, 4, 5, 6, 7]];
  const result = await f.balancer.apply({ phy2log });
  assert.equal(result.version, 2);
  assert.equal(result.previous, 1);
  const current = (await f.current())!;
  assert.deepEqual(current.layers.map((l) => l.phy2log), phy2log);
  assert.equal(current.slotsPerBackend, 4);
  assert.equal(current.reason, "admin apply: operator's phy2log");
  assert.equal(f.balancer.decisions()[0]?.trigger, "admin");
});

Deno.test("Balancer.apply() refuses while pinned and fails cleanly when staging fails", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  f.load.current = HOT;
  f.backends.failStage.add(A);
  await assert.rejects(() => f.balancer.apply(), PlanStageError);
  assert.equal((await f.current())?.version, 1);
  await f.store.pin("m", 1);
  await assert.rejects(() => f.balancer.apply(), /pinned to version 1; unpin it first/);
});

Deno.test("Balancer.apply({ pin: true }) applies and pins in one step, also over an earlier pin", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  const first = await f.balancer.apply({
    phy2log: [[7, 6, 5, 4, 3, 2, 1, 0], [0, 1, 2, 3, 4, 5, 6, 7]],
    pin: true,
  });
  assert.equal(await f.store.pinned("m"), first.version);
  // The balancer holds it: a hot load does not move it.
  f.load.current = HOT;
  await f.balancer.tick();
  await f.balancer.tick();
  assert.equal((await f.current())?.version, first.version);
  // Another apply with pin replaces the pinned plan; one without is refused.
  await assert.rejects(
    () => f.balancer.apply({ phy2log: [[0, 1, 2, 3, 4, 5, 6, 7], [7, 6, 5, 4, 3, 2, 1, 0]] }),
    /pinned/,
  );
  const second = await f.balancer.apply({
    phy2log: [[0, 1, 2, 3, 4, 5, 6, 7], [7, 6, 5, 4, 3, 2, 1, 0]],
    pin: true,
  });
  assert.equal(second.version, first.version + 1);
  assert.equal(await f.store.pinned("m"), second.version);
});

Deno.test("Balancer.pin() of an older version restores its placement as a new version", async () => {
  await using f = await balancerFixture();
  await f.balancer.tick();
  f.load.current = HOT;
  await f.balancer.tick(); // confirming (hysteresis)
  await f.balancer.tick();
  assert.equal((await f.current())?.version, 2);
  assert.deepEqual(await f.balancer.pin(2), { pinned: 2, restoredFrom: null });
  assert.deepEqual(await f.balancer.pin(1), { pinned: 3, restoredFrom: 1 });
  const current = (await f.current())!;
  assert.equal(current.version, 3);
  assert.deepEqual(current.layers, (await f.store.get("m", 1))!.layers);
  assert.equal(await f.store.pinned("m"), 3);
  await assert.rejects(() => f.balancer.pin(42), /model "m" has no version 42/);
  assert.equal(await f.balancer.unpin(), 3);
  assert.equal(await f.store.pinned("m"), null);
});

Deno.test("Balancer.preview() scores the planner's placement against the current plan", async () => {
  await using f = await balancerFixture();
  await assert.rejects(() => f.balancer.preview([[1]]), /weight has 1 layers, model "m" has 2/);
  await f.balancer.tick();
  const preview = await f.balancer.preview(HOT);
  assert.equal(preview.current.version, 1);
  assert.ok(Math.abs(preview.current.balancedness! - 0.68) < 1e-9);
  assert.ok(preview.proposed.balancedness > preview.current.balancedness!);
  assert.equal(preview.proposed.phy2log.length, 2);
  assert.ok(preview.moved > 0);
  await assert.rejects(
    () => f.balancer.preview([Array(8).fill(1), Array(7).fill(1)]),
    /weight\[1\] has 7 experts, model "m" has 8/,
  );
  // Nothing switched.
  assert.equal((await f.current())?.version, 1);
});

Deno.test("modelShapeFromMetadata() reads layers, experts and groups", () => {
  const metadata = { name: "m", platform: "p", inputs: [], outputs: [] };
  assert.equal(modelShapeFromMetadata(metadata), null);
  assert.deepEqual(
    modelShapeFromMetadata({ ...metadata, parameters: { layers: 2, experts: 8, groups: 2 } }),
    { name: "m", layers: 2, experts: 8, groups: 2 },
  );
  assert.deepEqual(
    modelShapeFromMetadata({ ...metadata, parameters: { layers: 2, experts: 8 } })?.groups,
    1,
  );
});

Deno.test("Balancer records a clear error when the budgets cannot hold every expert once", async () => {
  const MiB = 1048576;
  const budgets = new Map([["127.0.0.1:9001", { budgetBytes: 4 * MiB, expertBytes: MiB }]]);
  await using f = await balancerFixture({}, { budgets });
  const record = await f.balancer.tick();
  assert.equal(record.outcome, "error");
  assert.match(record.error!, /fits 2 experts per layer .* not even one replica per expert fits/);
  assert.equal(await f.current(), null, "no plan is made");
  assert.equal(f.logger.find("balancer decision").at(-1)!.level, "error");
  await assert.rejects(() => f.balancer.apply(), /Cannot apply plan: the memory budget/);
});
