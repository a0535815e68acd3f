import assert from "node:assert/strict";
import { Hono } from "hono";
import {
  flatForecast,
  poolLoad,
  prewarmFixture,
} from "../../../tests/_support/router/prewarm_fixture.ts";
import { type CronLike, PrewarmJob, registerPrewarmCron } from "./prewarm_job.ts";
import { registerPrewarmRoutes } from "./prewarm_routes.ts";

const IDS = ["127.0.0.1:9001", "127.0.0.1:9002"];
const AFFINITY = { chat: [[5, 5, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 3, 3]] };

Deno.test("PrewarmJob keeps the last decisions and blends its prediction into observed load", async () => {
  await using p = await prewarmFixture();
  const now = p.f.clock.now();
  const job = new PrewarmJob(p.deps, { decisionsKept: 2 });
  p.pool.load = poolLoad(now, IDS, 100, 0.5);
  p.traffic.forecast = flatForecast(now, 15 * 60_000, 500);
  p.traffic.mix = { chat: 1 };
  p.traffic.affinity = AFFINITY;
  assert.equal(job.blendLoad("m", null, now), null);
  const decision = await job.run(now);
  assert.equal(decision.outcome, "prewarmed");
  const observed = [Array(8).fill(100), Array(8).fill(1)];
  const blended = job.blendLoad("m", observed, now + 60_000)!;
  assert.deepEqual(blended[0], [500, 500, 100, 100, 100, 100, 100, 100]);
  assert.deepEqual(blended[1], [1, 1, 1, 1, 1, 1, 500, 500]);
  assert.equal(job.blendLoad("other", observed, now), observed);
  assert.equal(job.blendLoad("m", observed, now + 15 * 60_000), observed, "expired");
  await job.run(now + 1);
  await job.run(now + 2);
  assert.deepEqual(job.decisions().map((d) => d.at), [now + 2, now + 1]);
});

Deno.test("GET /api/prewarm lists settings and decisions, newest first", async () => {
  await using p = await prewarmFixture();
  const now = p.f.clock.now();
  const job = new PrewarmJob(p.deps);
  p.pool.load = poolLoad(now, IDS, 100, 0.5);
  p.traffic.forecast = flatForecast(now, 15 * 60_000, 500);
  p.traffic.mix = { chat: 1 };
  p.traffic.affinity = AFFINITY;
  await job.run(now);
  await job.run(now + 60_000);
  const app = new Hono();
  registerPrewarmRoutes(app, job);
  const response = await app.request("/api/prewarm");
  assert.equal(response.status, 200);
  const body = await response.json();
  assert.deepEqual(body.settings, {
    horizon_ms: 900_000,
    threshold: 0.8,
    lead_time_ms: 3_600_000,
    max_backends: 8,
  });
  assert.equal(body.enabled, true);
  assert.equal(body.scaler, "recording");
  assert.equal(body.decisions.length, 2);
  const [latest, first] = body.decisions;
  assert.equal(latest.at, now + 60_000);
  assert.equal(first.trigger, "overload");
  assert.equal(first.outcome, "prewarmed");
  assert.equal(first.predicted.tokensPerS, 500);
  assert.equal(first.predicted.expertLoad.length, 2);
  assert.equal(first.capacity.perBackendTokensPerS, 200);
  assert.equal(typeof first.plan.version, "number");
  assert.equal(first.warmed.length, 2);
  assert.ok(first.warmed.every((w: { warmed: string[] }) => w.warmed.length > 0));
  assert.equal(first.recommendation.target, 4);
  const limited = await (await app.request("/api/prewarm?limit=1")).json();
  assert.equal(limited.decisions.length, 1);
  const bad = await app.request("/api/prewarm?limit=0");
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /limit must be an integer 1–500, got "0"/);
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
