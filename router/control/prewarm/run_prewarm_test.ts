/** @module runPrewarm(): one run's decision on a manual clock (the contracts: capacity_controller_test.ts). */
import assert from "node:assert/strict";
import {
  flatForecast,
  poolLoad,
  prewarmFixture,
  SERVING,
} from "../../../tests/_support/router/prewarm_fixture.ts";
import { CapacityController } from "./capacity_controller.ts";
import { runPrewarm } from "./run_prewarm.ts";

const MIN = 60_000;
const AFFINITY = { chat: [[5, 5, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 3, 3]] };

async function setUp(settings = {}) {
  const p = await prewarmFixture({ lead_time: 20 * MIN, ...settings });
  const controller = new CapacityController(p.deps);
  const run = () => runPrewarm(p.deps, controller, p.f.clock.now());
  return { p, controller, run, [Symbol.asyncDispose]: () => p[Symbol.asyncDispose]() };
}

Deno.test("runPrewarm() without a forecast, traffic or event does nothing, and says why", async () => {
  await using t = await setUp();
  const decision = await t.run();
  assert.equal(decision.outcome, "skipped");
  assert.equal(decision.trigger, "none");
  assert.match(decision.reason, /no prediction/);
  assert.equal(decision.capacityPlan, null);
  assert.deepEqual(t.p.scaler.requests, []);
  assert.equal(t.p.f.logger.find("prewarm").length, 1);
});

Deno.test("runPrewarm() keeps the pool when the prediction fits it, and asks nothing", async () => {
  await using t = await setUp();
  const now = t.p.f.clock.now();
  // Capacity 100 / 0.5 = 200 tokens/s per backend; 2 × 200 × 0.8 = 320 ≥ 300.
  t.p.load.current = poolLoad(now, SERVING, 100, 0.5);
  t.p.traffic.forecast = flatForecast(now, 120 * MIN, 300);
  const decision = await t.run();
  assert.equal(decision.outcome, "kept");
  assert.equal(decision.trigger, "none");
  assert.deepEqual([decision.capacityPlan?.target, decision.capacityPlan?.readyBy], [2, null]);
  assert.equal(decision.capacity.perBackendTokensPerS, 200);
  assert.equal(decision.predicted?.tokensPerS, 300);
  assert.deepEqual(t.p.scaler.requests, []);
  assert.equal(decision.contract, null);
  assert.deepEqual(decision.members, {
    active: 2,
    standby: 0,
    draining: 0,
    ready: 2,
    pending: 0,
    desired: 2,
  });
});

Deno.test("runPrewarm() forecast above the pool: a contract for N backends by the first short minute", async () => {
  await using t = await setUp();
  const now = t.p.f.clock.now();
  t.p.load.current = poolLoad(now, SERVING, 100, 0.5);
  t.p.traffic.forecast = flatForecast(now, 120 * MIN, 500);
  t.p.traffic.mix = { chat: 1 };
  t.p.traffic.affinity = AFFINITY;
  const decision = await t.run();
  assert.equal(decision.outcome, "planned");
  assert.equal(decision.trigger, "overload");
  assert.equal(decision.capacityPlan?.target, 4); // 500 / 160
  assert.equal(decision.capacityPlan?.readyBy, now); // already short
  assert.equal(decision.predicted?.expertLoad.length, 2);
  assert.equal(decision.contract?.source, "forecast");
  assert.deepEqual(t.p.scaler.requests.map((r) => [r.current, r.target]), [[2, 4]]);
  assert.equal(decision.scaler?.status, "requested");
  assert.match(decision.reason, /the forecast needs 4 backends .* lead 1200 s \(configured\)/);
});

Deno.test("runPrewarm() without a capacity estimate predicts but plans nothing", async () => {
  await using t = await setUp();
  t.p.traffic.forecast = flatForecast(t.p.f.clock.now(), 120 * MIN, 500);
  const decision = await t.run();
  assert.equal(decision.outcome, "skipped");
  assert.match(decision.reason, /capacity per backend unknown/);
  assert.equal(decision.predicted?.tokensPerS, 500);
  assert.deepEqual(t.p.scaler.requests, []);
});

Deno.test("runPrewarm() caps at prewarm.max_backends, logs a warning and says so", async () => {
  await using t = await setUp({ max_backends: 3 });
  const now = t.p.f.clock.now();
  t.p.load.current = poolLoad(now, SERVING, 100, 0.5);
  t.p.traffic.forecast = flatForecast(now, 120 * MIN, 1000);
  const decision = await t.run();
  assert.deepEqual(
    [decision.capacityPlan?.target, decision.capacityPlan?.needed, decision.capacityPlan?.capped],
    [3, 7, true],
  );
  assert.match(decision.reason, /capped at prewarm\.max_backends 3: 7 needed/);
  assert.equal(t.p.f.logger.find("capacity plan capped")[0]!.level, "warn");
  assert.ok(t.controller.conditions().some((c) => c.id === "capacity:capped"), "alerted");
});

Deno.test("runPrewarm() never throws: a failing source is an error decision, logged", async () => {
  await using t = await setUp();
  t.p.deps.traffic.forecastVolume = () => Promise.reject(new Error("KV unavailable"));
  const decision = await t.run();
  assert.equal(decision.outcome, "error");
  assert.equal(decision.error, "KV unavailable");
  assert.equal(t.p.f.logger.find("prewarm")[0]!.level, "error");
});

Deno.test("runPrewarm() without a forecast yet plans on the traffic now, and on an event ahead", async () => {
  await using t = await setUp({ capacity_per_backend: 100 });
  const now = t.p.f.clock.now();
  t.p.load.current = poolLoad(now, SERVING, 20, 0.1); // 40 tokens/s observed
  t.p.events.list = [{ name: "promo", start: now + 10 * MIN, end: now + 20 * MIN, multiplier: 5 }];
  const decision = await t.run();
  assert.equal(decision.capacity.source, "configured");
  // 40 × 5 = 200 tokens/s at 100 × 0.8 per backend: 3 backends by the event's start.
  assert.deepEqual(
    [decision.capacityPlan?.target, decision.capacityPlan?.readyBy],
    [3, now + 10 * MIN],
  );
});
