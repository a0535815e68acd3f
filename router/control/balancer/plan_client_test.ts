/** @module PlanClient: parallel calls, per-backend failures, timeouts, the token. */
import assert from "node:assert/strict";
import { staticPlan } from "../../../shared/placement_plan.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { FakePlanBackends } from "../../../tests/_support/router/fake_plan_backends.ts";
import { NOT_STEERING, PlanCallError, PlanClient, PlanStageError } from "./plan_client.ts";

const TOKEN = "internal-token-0123456789";

function setup(ids = ["a:1", "b:1"]) {
  const backends = new FakePlanBackends(ids, { internalToken: TOKEN });
  const clock = new ManualClock();
  const client = new PlanClient({ fetch: backends.fetch, clock, internalToken: TOKEN });
  const plan = staticPlan({ model: "m", layers: 1, experts: 4, backends: backends.backends() });
  return { backends, clock, client, plan };
}

Deno.test("PlanClient stages, activates, releases and reads status with the token", async () => {
  const { backends, client, plan } = setup();
  const staged = await client.stage(plan);
  assert.deepEqual(staged, [
    { backend: "a:1", staged: 1, loaded: ["L0/E0", "L0/E1"], ms: 1 },
    { backend: "b:1", staged: 1, loaded: ["L0/E2", "L0/E3"], ms: 1 },
  ]);
  assert.deepEqual(await client.status(plan.backends[0]!), { active: null, staged: 1 });
  await client.activate(plan);
  assert.deepEqual(await client.release(plan), [
    { backend: "a:1", unloaded: [] },
    { backend: "b:1", unloaded: [] },
  ]);
  assert.deepEqual(await client.status(plan.backends[1]!), { active: 1, staged: null });
  for (const state of backends.state.values()) {
    assert.ok(state.authorizations.every((value) => value === `Bearer ${TOKEN}`));
  }
});

Deno.test("PlanClient.stage() names every backend that failed, and why", async () => {
  const { backends, client } = setup(["a:1", "b:1", "c:1"]);
  backends.failStage.add("b:1");
  const gone = staticPlan({
    model: "m",
    layers: 1,
    experts: 4,
    backends: [...backends.backends(), { id: "d:1", url: "http://d:1" }],
  });
  const error = await client.stage(gone).catch((e) => e);
  assert.ok(error instanceof PlanStageError);
  assert.deepEqual(error.failures, [
    { backend: "b:1", reason: "HTTP 500: Cannot load experts: out of memory" },
    { backend: "d:1", reason: "connection failed: connection refused" },
  ]);
  assert.deepEqual(error.succeeded, ["a:1", "c:1"]);
  assert.match(error.message, /^Cannot stage plan version 1: failed on "b:1" \(HTTP 500/);
  assert.ok(!error.message.includes(TOKEN));
});

Deno.test("PlanClient.activate() throws PlanCallError when a backend has not staged", async () => {
  const { client, plan } = setup();
  const error = await client.activate(plan).catch((e) => e);
  assert.ok(error instanceof PlanCallError && !(error instanceof PlanStageError));
  assert.equal(error.step, "activate");
  assert.match(error.failures[0]!.reason, /HTTP 409: version 1 is not staged/);
});

Deno.test("PlanClient times each backend out on the injected clock", async () => {
  const clock = new ManualClock();
  const hang = (_input: Request | URL | string, init?: RequestInit) =>
    new Promise<Response>((_, reject) =>
      init?.signal?.addEventListener("abort", () => reject(new DOMException("aborted")))
    );
  const client = new PlanClient({ fetch: hang, clock, timeoutMs: 500, stageTimeoutMs: 2_000 });
  const plan = staticPlan({
    model: "m",
    layers: 1,
    experts: 2,
    backends: [{ id: "a:1", url: "http://a:1/" }],
  });
  const status = client.status(plan.backends[0]!).catch((e) => e);
  const stage = client.stage(plan).catch((e) => e);
  await clock.advance(500);
  const statusError = await status;
  assert.equal(statusError.failures[0].reason, "timed out after 500 ms");
  assert.match(statusError.message, /^Cannot read plan status/);
  await clock.advance(1_500);
  assert.equal((await stage).failures[0].reason, "timed out after 2000 ms");
});

Deno.test("PlanClient rejects a malformed answer", async () => {
  const clock = new ManualClock();
  const fetch = () => Promise.resolve(Response.json({ staged: "yes" }));
  const client = new PlanClient({ fetch, clock });
  const plan = staticPlan({
    model: "m",
    layers: 1,
    experts: 2,
    backends: [{ id: "a", url: "http://a" }],
  });
  const error = await client.stage(plan).catch((e) => e);
  assert.match(error.failures[0].reason, /^bad answer: staged: /);
});

Deno.test("PlanClient carries the pool and term; another pool's calls are refused with 409", async () => {
  const backends = new FakePlanBackends(["a:1", "b:1"], { internalToken: TOKEN });
  const clock = new ManualClock();
  let term: number | null = 2;
  const first = new PlanClient({
    fetch: backends.fetch,
    clock,
    internalToken: TOKEN,
    owner: () => term === null ? null : { pool: "pool-a", term },
  });
  const second = new PlanClient({
    fetch: backends.fetch,
    clock,
    internalToken: TOKEN,
    owner: () => ({ pool: "pool-b", term: 9 }),
  });
  const plan = staticPlan({ model: "m", layers: 1, experts: 4, backends: backends.backends() });
  await first.stage(plan);
  assert.deepEqual(backends.state.get("a:1")!.owner, { pool: "pool-a", term: 2 });
  const refused = await second.stage({ ...plan, version: 2 }).catch((e) => e);
  assert.ok(refused instanceof PlanStageError);
  assert.match(refused.failures[0]!.reason, /^HTTP 409: .*follows pool "pool-a" \(term 2\)/);
  assert.equal(backends.state.get("b:1")!.staged, 1);
  // Not leading: no call is sent at all.
  term = null;
  const calls = backends.calls.length;
  const idle = await first.activate(plan).catch((e) => e);
  assert.ok(idle instanceof PlanCallError);
  assert.equal(idle.failures[0]!.reason, NOT_STEERING);
  assert.equal(backends.calls.length, calls);
});
