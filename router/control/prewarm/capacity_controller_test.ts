/**
 * Capacity contracts on a manual clock: the pre-warm job (production code) over a real
 * `Balancer` on fake plan backends, a fake pool and a recording scaler. "N backends ready,
 * placement staged, by T", escalation, activation at the event, scale-down with draining.
 */
import assert from "node:assert/strict";
import { hostedExperts } from "../../../shared/placement_plan.ts";
import {
  flatForecast,
  poolLoad,
  prewarmFixture,
  SERVING,
  SPARES,
} from "../../../tests/_support/router/prewarm_fixture.ts";
import { PrewarmJob } from "./prewarm_job.ts";

const MIN = 60_000;
/** "chat" uses experts 0 and 1 of layer 0 and 6, 7 of layer 1; "code" the others evenly. */
const AFFINITY = {
  chat: [[5, 5, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 3, 3]],
  code: [[0, 0, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 0, 0]],
};
const urls = SPARES.map((id) => `http://${id}`);

/**
 * Two backends of capacity 200 tokens/s (100 at utilisation 0.5) serve 300 tokens/s (2 at
 * threshold 0.8); a 2× "chat" event 30 minutes ahead needs 4 (600 ÷ 160) by its start.
 */
async function eventSetUp(settings = {}, options: { acts?: boolean } = {}) {
  const p = await prewarmFixture({ lead_time: 30 * MIN, ...settings }, options);
  const now = p.f.clock.now();
  const start = now + 30 * MIN;
  p.load.current = poolLoad(now, SERVING, 100, 0.5);
  p.traffic.forecast = flatForecast(now, 180 * MIN, 300);
  p.traffic.mix = { code: 1 };
  p.traffic.affinity = AFFINITY;
  p.events.list = [{
    name: "promo",
    start,
    end: start + 60 * MIN,
    multiplier: 2,
    mix: { chat: 1 },
  }];
  const job = new PrewarmJob(p.deps, { decisionsKept: 100 });
  return { p, job, start, [Symbol.asyncDispose]: () => p[Symbol.asyncDispose]() };
}

Deno.test("an event contract: N requested by T, new backends wait as standby with the event placement staged, activated at T", async () => {
  await using t = await eventSetUp();
  const { p, job, start } = t;
  // Step 1: one lead time ahead, the job asks for 4 backends ready by the event's start.
  const decision = await job.run(p.f.clock.now());
  assert.equal(decision.outcome, "planned");
  assert.equal(decision.trigger, "event_lead");
  assert.deepEqual(
    [decision.capacityPlan?.target, decision.capacityPlan?.readyBy],
    [4, start],
  );
  assert.equal(decision.lead.source, "configured");
  const [request] = p.scaler.requests;
  assert.deepEqual(
    [request!.current, request!.target, request!.readyBy, request!.contract],
    [2, 4, start, "c1"],
  );
  assert.equal(decision.contract?.status, "on_track");
  assert.equal(job.desired(), 4);
  // Step 2: five minutes later the launcher reports both ready; they join as standby.
  await p.f.clock.advance(5 * MIN);
  urls.forEach((url) => p.scaler.markReady(url));
  await job.capacity.track(p.f.clock.now());
  assert.deepEqual(SPARES.map((id) => p.pool.role(id)), ["standby", "standby"]);
  assert.deepEqual(job.coldStarts().map((s) => s.readyMs), [5 * MIN, 5 * MIN]);
  // Until they pass their checks, nothing is staged.
  assert.equal(job.contract()?.stagedVersion, null);
  urls.forEach((url) => p.pool.ready(url));
  await job.capacity.track(p.f.clock.now());
  // Step 3: the event placement for 4 backends is staged, not current; v1 still serves.
  const staged = job.contract()!.stagedVersion!;
  assert.equal(staged, 2);
  assert.equal((await p.f.current())!.version, 1);
  for (const id of SERVING) assert.deepEqual(state(p, id), [1, 2]);
  for (const id of SPARES) assert.deepEqual(state(p, id), [null, 2]);
  assert.equal(job.contract()?.status, "ready");
  // The balancer's own ticks meanwhile keep the pre-event plan (its pool is the serving two).
  assert.equal((await p.f.balancer.tick()).outcome, "kept");
  assert.equal(job.blendLoad("m", null, p.f.clock.now()), null, "nothing lent before activation");
  // The lead is now measured: the 5-minute cold start × 1.25 + one run.
  assert.equal(job.lead().source, "measured");
  assert.equal(job.lead().leadMs, Math.ceil((5 * MIN + 1) * 1.25 + MIN));
  // Step 4: one minute before the event nothing changes; at its start the version activates.
  await p.f.clock.advance(start - MIN - p.f.clock.now());
  await job.capacity.track(p.f.clock.now());
  assert.equal((await p.f.current())!.version, 1);
  await p.f.clock.advance(MIN);
  await job.capacity.track(p.f.clock.now());
  const current = (await p.f.current())!;
  assert.equal(current.version, staged);
  assert.deepEqual(current.backends.map((b) => b.id).sort(), [...SERVING, ...SPARES]);
  for (const id of [...SERVING, ...SPARES]) assert.equal(p.pool.role(id), "active");
  for (const id of [...SERVING, ...SPARES]) assert.equal(state(p, id)[0], staged);
  assert.equal(job.contract()?.status, "activated");
  // The event's experts (chat: 0, 1 of layer 0) are placed for it, and lent to the balancer.
  const hosting = [...SERVING, ...SPARES].filter((id) =>
    hostedExperts(current, id)[0]!.includes(0)
  );
  assert.ok(hosting.length >= 1);
  assert.ok(job.blendLoad("m", null, p.f.clock.now()) !== null);
  const activation = p.f.balancer.decisions()[0]!;
  assert.deepEqual([activation.action, activation.trigger], ["activate_staged", "prewarm"]);
  assert.equal(p.f.logger.find("capacity contract activated")[0]!.fields["why"], "deadline");
});

Deno.test("under expert_balancer.strategy static or off (no placement port) a contract adds backends but stages no placement; at T they join and the balancer places as configured", async () => {
  await using t = await eventSetUp();
  const { p, start } = t;
  const { placement: _, ...deps } = p.deps;
  const job = new PrewarmJob(deps, { decisionsKept: 100 });
  const decision = await job.run(p.f.clock.now());
  assert.deepEqual([decision.outcome, decision.capacityPlan?.target], ["planned", 4]);
  urls.forEach((url) => p.scaler.markReady(url));
  await job.capacity.track(p.f.clock.now());
  urls.forEach((url) => p.pool.ready(url));
  await job.capacity.track(p.f.clock.now());
  assert.deepEqual(SPARES.map((id) => p.pool.role(id)), ["standby", "standby"]);
  assert.equal(job.contract()?.stagedVersion, null);
  assert.equal((await p.f.current())!.version, 1);
  await p.f.clock.advance(start - p.f.clock.now());
  await job.capacity.track(p.f.clock.now());
  for (const id of [...SERVING, ...SPARES]) assert.equal(p.pool.role(id), "active");
  assert.equal(job.contract()?.status, "activated");
  assert.equal(job.blendLoad("m", null, p.f.clock.now()), null, "no placement load lent");
  assert.deepEqual(p.f.balancer.decisions().filter((d) => d.trigger === "prewarm"), []);
});

Deno.test("the contract activates early when the event's traffic arrives before T", async () => {
  await using t = await eventSetUp();
  const { p, job, start } = t;
  await job.run(p.f.clock.now());
  await p.f.clock.advance(5 * MIN);
  urls.forEach((url) => {
    p.scaler.markReady(url);
  });
  await job.capacity.track(p.f.clock.now());
  urls.forEach((url) => p.pool.ready(url));
  await job.capacity.track(p.f.clock.now());
  // Ramp: today 200 tokens/s (2 × 100), the event's peak 600: half-way is 400.
  p.load.current = poolLoad(p.f.clock.now(), SERVING, 210, 0.9);
  await job.capacity.track(p.f.clock.now());
  assert.ok(p.f.clock.now() < start);
  assert.equal(job.contract()?.status, "activated");
  assert.equal(p.f.logger.find("capacity contract activated")[0]!.fields["why"], "traffic arrived");
});

Deno.test("a scaler that never reports ready: at risk, then missed at T — logged once each, alerted, counted; the job keeps running", async () => {
  await using t = await eventSetUp({ ready_timeout: 10 * MIN });
  const { p, job, start } = t;
  await job.run(p.f.clock.now());
  assert.equal(job.contract()?.status, "on_track");
  await p.f.clock.advance(10 * MIN);
  await job.run(p.f.clock.now());
  await job.run(p.f.clock.now() + 1);
  assert.equal(job.contract()?.status, "at_risk");
  assert.match(job.contract()!.message, /2 requested backend\(s\) never became ready/);
  assert.equal(p.f.logger.find("capacity contract at risk").length, 1);
  assert.deepEqual(job.conditions().map((c) => c.id), ["capacity:deadline:c1"]);
  await p.f.clock.advance(start - p.f.clock.now());
  await job.run(p.f.clock.now());
  await job.run(p.f.clock.now() + 1);
  assert.equal(p.f.logger.find("capacity contract missed").length, 1);
  assert.equal(p.f.logger.find("capacity contract missed")[0]!.level, "error");
  assert.equal(job.missed, 1);
  assert.equal(job.decisions()[0]!.outcome, "planned");
});

Deno.test("an advisory scaler adds nothing: the contract is at risk at once, the event placement is still staged on the pool and activated at T", async () => {
  await using t = await eventSetUp({}, { acts: false });
  const { p, job, start } = t;
  await job.run(p.f.clock.now());
  assert.equal(job.contract()?.status, "at_risk");
  assert.match(job.contract()!.message, /2 not requested or not coming/);
  // Staged on the two serving backends shortly before T (a minute), not an hour ahead.
  await p.f.clock.advance(start - 5 * MIN - p.f.clock.now());
  await job.capacity.track(p.f.clock.now());
  assert.equal(job.contract()?.stagedVersion, null);
  await p.f.clock.advance(4 * MIN);
  await job.capacity.track(p.f.clock.now());
  const staged = job.contract()!.stagedVersion;
  assert.equal(staged, 2);
  assert.equal((await p.f.current())!.version, 1);
  await p.f.clock.advance(start - p.f.clock.now());
  await job.capacity.track(p.f.clock.now());
  assert.equal((await p.f.current())!.version, 2);
});

Deno.test("after the peak: capacity is given back after the hold, draining first — never below the floor, never with work in flight", async () => {
  await using t = await eventSetUp();
  const { p, job, start } = t;
  await job.run(p.f.clock.now());
  await p.f.clock.advance(5 * MIN);
  urls.forEach((url) => p.scaler.markReady(url));
  await job.capacity.track(p.f.clock.now());
  urls.forEach((url) => p.pool.ready(url));
  await job.capacity.track(p.f.clock.now());
  await p.f.clock.advance(start - p.f.clock.now());
  await job.capacity.track(p.f.clock.now());
  const end = start + 60 * MIN;
  // After the event: 300 tokens/s again, 4 backends of 200. Nothing until the hold passed.
  p.load.current = poolLoad(end, [...SERVING, ...SPARES], 75, 0.375);
  await p.f.clock.advance(end - p.f.clock.now());
  p.traffic.forecast = flatForecast(p.f.clock.now(), 180 * MIN, 300);
  await job.run(p.f.clock.now());
  assert.equal(p.pool.members.filter((m) => m.role === "draining").length, 0);
  await p.f.clock.advance(10 * MIN);
  await job.run(p.f.clock.now());
  assert.deepEqual(SPARES.map((id) => p.pool.role(id)), ["draining", "draining"]);
  assert.deepEqual(SPARES.map((id) => p.pool.role(id)), ["draining", "draining"]);
  // One drained backend still has a request in flight; the plan still places experts on both.
  p.pool.members.find((m) => m.name === SPARES[1])!.inFlight = 1;
  await job.capacity.track(p.f.clock.now());
  assert.equal(p.pool.members.length, 4, "nothing leaves while the current plan uses it");
  // The balancer re-plans for its pool (the two active members) …
  const replan = await p.f.balancer.tick();
  assert.equal(replan.outcome, "switched");
  await job.capacity.track(p.f.clock.now());
  // … then the idle one leaves (pool first, then the scaler stops it); the busy one waits.
  assert.deepEqual(p.pool.members.map((m) => m.name).sort(), [...SERVING, SPARES[1]!]);
  assert.deepEqual(p.scaler.requests.at(-1)!.remove, [urls[0]]);
  p.pool.members.find((m) => m.name === SPARES[1])!.inFlight = 0;
  await job.capacity.track(p.f.clock.now());
  assert.deepEqual(p.pool.members.map((m) => m.name).sort(), SERVING);
  assert.deepEqual(p.scaler.requests.at(-1)!.remove, [urls[1]]);
  assert.equal(p.scaler.requests.at(-1)!.target, 2, "the floor");
  assert.equal(job.desired(), 2);
  assert.deepEqual(p.scaler.running, []);
});

function state(
  p: { f: { backends: { state: Map<string, { active: number | null; staged: number | null }> } } },
  id: string,
) {
  const s = p.f.backends.state.get(id)!;
  return [s.active, s.staged];
}
