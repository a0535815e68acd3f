import assert from "node:assert/strict";
import { Hono } from "hono";
import {
  flatForecast,
  poolLoad,
  prewarmFixture,
  SERVING,
} from "../../../tests/_support/router/prewarm_fixture.ts";
import { type CronLike, PrewarmJob, registerPrewarmCron } from "./prewarm_job.ts";
import { prewarmRoutes } from "./prewarm_routes.ts";

const AFFINITY = { chat: [[5, 5, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 3, 3]] };

Deno.test("PrewarmJob keeps the last decisions, newest first", async () => {
  await using p = await prewarmFixture();
  const now = p.f.clock.now();
  const job = new PrewarmJob(p.deps, { decisionsKept: 2 });
  p.load.current = poolLoad(now, SERVING, 100, 0.5);
  p.traffic.forecast = flatForecast(now, 120 * 60_000, 300);
  await job.run(now);
  await job.run(now + 1);
  await job.run(now + 2);
  assert.deepEqual(job.decisions().map((d) => d.at), [now + 2, now + 1]);
  assert.equal(job.blendLoad("m", null, now), null, "no contract in force: nothing lent");
});

Deno.test("GET /api/prewarm shows settings, lead, contract, members and decisions; /desired what an autoscaler reads", async () => {
  await using p = await prewarmFixture({ lead_time: 20 * 60_000 });
  const now = p.f.clock.now();
  const job = new PrewarmJob(p.deps);
  p.load.current = poolLoad(now, SERVING, 100, 0.5);
  p.traffic.forecast = flatForecast(now, 120 * 60_000, 500);
  p.traffic.mix = { chat: 1 };
  p.traffic.affinity = AFFINITY;
  await job.run(now);
  await job.run(now + 60_000);
  const app = new Hono().route("/api/prewarm", prewarmRoutes(job));
  const response = await app.request("/api/prewarm");
  assert.equal(response.status, 200);
  const body = await response.json();
  assert.deepEqual(body.settings, {
    horizon_ms: 900_000,
    threshold: 0.8,
    lead_time_ms: 1_200_000,
    cold_start_percentile: 0.95,
    lead_margin: 0.25,
    min_backends: 2,
    max_backends: null,
    scale_down_hold_ms: 600_000,
  });
  assert.equal(body.enabled, true);
  assert.equal(body.scaler, "recording");
  assert.deepEqual([body.lead.leadMs, body.lead.source], [1_200_000, "configured"]);
  assert.deepEqual(body.cold_starts, []);
  assert.deepEqual([body.contract.id, body.contract.target], ["c1", 4]);
  assert.equal(body.desired_backends, 4);
  assert.equal(body.members.pending, 2);
  assert.equal(body.decisions.length, 2);
  const [latest, first] = body.decisions;
  assert.equal(latest.at, now + 60_000);
  assert.equal(first.trigger, "overload");
  assert.equal(first.outcome, "planned");
  assert.equal(first.capacityPlan.target, 4);
  const limited = await (await app.request("/api/prewarm?limit=1")).json();
  assert.equal(limited.decisions.length, 1);
  const bad = await app.request("/api/prewarm?limit=0");
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /limit must be an integer 1–500, got "0"/);
  const desired = await (await app.request("/api/prewarm/desired")).json();
  assert.equal(desired.desired_replicas, 4);
  assert.equal(desired.contract, "c1");
  assert.equal(desired.ready_by, new Date(now).toISOString());
  assert.equal(desired.lead_s, 1200);
});

Deno.test("registerPrewarmCron() runs the job every minute and unregisters on abort", async () => {
  await using p = await prewarmFixture();
  const job = new PrewarmJob(p.deps);
  const registered: {
    name: string;
    schedule: string;
    signal: AbortSignal;
    run: () => Promise<void>;
  }[] = [];
  const cron: CronLike = (name, schedule, options, handler) => {
    registered.push({ name, schedule, signal: options.signal, run: handler });
    return new Promise((resolve) => options.signal.addEventListener("abort", () => resolve()));
  };
  const stop = registerPrewarmCron(job, { now: () => p.f.clock.now(), logger: p.f.logger, cron });
  assert.equal(registered.length, 1);
  assert.equal(registered[0]!.schedule, "* * * * *");
  await registered[0]!.run();
  assert.equal(job.decisions().length, 1);
  stop();
  assert.equal(registered[0]!.signal.aborted, true);
  const failing: CronLike = () => {
    throw new Error("cron unavailable");
  };
  registerPrewarmCron(job, { now: () => 0, logger: p.f.logger, cron: failing });
  assert.equal(p.f.logger.find("prewarm cron not registered").length, 1);
});
