import assert from "node:assert/strict";
import { hostedExperts } from "../../../shared/placement_plan.ts";
import { MODEL } from "../../../tests/_support/router/balancer_fixture.ts";
import {
  flatForecast,
  poolLoad,
  prewarmFixture,
} from "../../../tests/_support/router/prewarm_fixture.ts";
import { runPrewarm } from "./run_prewarm.ts";

const IDS = ["127.0.0.1:9001", "127.0.0.1:9002"];

/** "chat" uses experts 0 and 1 of layer 0 and 6, 7 of layer 1; "code" the others evenly. */
const AFFINITY = {
  chat: [[5, 5, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 3, 3]],
  code: [[0, 0, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 0, 0]],
};

Deno.test("runPrewarm() without a forecast or event does nothing", async () => {
  await using p = await prewarmFixture();
  const version = (await p.f.current())!.version;
  p.pool.load = poolLoad(p.f.clock.now(), IDS, 100, 0.5);
  const decision = await runPrewarm(p.deps, p.f.clock.now());
  assert.equal(decision.outcome, "skipped");
  assert.equal(decision.trigger, "none");
  assert.match(decision.reason, /no prediction/);
  assert.equal(decision.plan, null);
  assert.equal(p.warmCalls.length, 0);
  assert.deepEqual(p.published, []);
  assert.equal((await p.f.current())!.version, version);
  assert.equal(p.f.logger.find("prewarm").length, 1);
});

Deno.test("runPrewarm() keeps everything when the prediction fits the capacity", async () => {
  await using p = await prewarmFixture();
  const now = p.f.clock.now();
  const version = (await p.f.current())!.version;
  // Capacity 100 / 0.5 = 200 tokens/s per backend; 2 × 200 × 0.8 = 320 ≥ 300.
  p.pool.load = poolLoad(now, IDS, 100, 0.5);
  p.traffic.forecast = flatForecast(now, 15 * 60_000, 300);
  p.traffic.affinity = AFFINITY;
  const decision = await runPrewarm(p.deps, now);
  assert.equal(decision.outcome, "kept");
  assert.equal(decision.trigger, "none");
  assert.equal(decision.capacity.perBackendTokensPerS, 200);
  assert.equal(decision.capacity.source, "reports");
  assert.equal(decision.recommendation?.target, 2);
  assert.equal(p.warmCalls.length, 0);
  assert.deepEqual(p.published, [], "no change recommended, nothing published");
  assert.equal((await p.f.current())!.version, version);
});

Deno.test("runPrewarm() stages a plan for the predicted load and warms exactly what it needs", async () => {
  await using p = await prewarmFixture();
  const now = p.f.clock.now();
  const before = (await p.f.current())!;
  p.pool.load = poolLoad(now, IDS, 100, 0.5); // 200 tokens/s per backend
  p.traffic.forecast = flatForecast(now, 15 * 60_000, 500); // > 320
  p.traffic.mix = { chat: 3, code: 1 };
  p.traffic.affinity = AFFINITY;
  const decision = await runPrewarm(p.deps, now);

  assert.equal(decision.trigger, "overload");
  assert.equal(decision.outcome, "prewarmed");
  assert.match(decision.reason, /predicted 500\.0 tokens\/s > capacity 200\.0 × 2 backends/);
  // Expected load: 500 tokens/s × mix × affinity scaled to top-2 per layer.
  const expected = [
    [375, 375, 0, 0, 0, 0, 0, 0].map((v, e) => v + (e >= 2 ? 125 * 2 / 6 : 0)),
    [0, 0, 0, 0, 0, 0, 375, 375].map((v, e) => v + (e < 6 ? 125 * 2 / 6 : 0)),
  ];
  decision.predicted!.expertLoad.forEach((row, l) =>
    row.forEach((v, e) => assert.ok(Math.abs(v - expected[l]![e]!) < 1e-9, `L${l}/E${e}: ${v}`))
  );
  // The plan is the planner's placement for that load, applied as a new version.
  const preview = await p.f.balancer.preview(expected);
  const plan = (await p.f.current())!;
  assert.equal(decision.plan?.action, "switched");
  assert.equal(decision.plan?.version, plan.version);
  assert.ok(plan.version > before.version);
  assert.deepEqual(plan.layers.map((l) => l.phy2log), preview.proposed.phy2log);
  // The audit trail names the real trigger: the pre-warm job, not an operator.
  const audit = p.f.balancer.decisions()[0]!;
  assert.deepEqual([audit.trigger, audit.version], ["prewarm", plan.version]);
  assert.equal(p.f.logger.find("plan switched").at(-1)!.fields["trigger"], "prewarm");
  // Warm: on each backend, exactly the experts it holds that carry predicted load.
  assert.equal(p.warmCalls.length, 2);
  for (const call of p.warmCalls) {
    const hosted = hostedExperts(plan, call.backend);
    const want = hosted.flatMap((experts, l) =>
      experts.filter((e) => expected[l]![e]! > 0).map((e) => `L${l}/E${e}`)
    );
    assert.deepEqual([...call.parts].sort(), want.sort(), call.backend);
    // Hottest first.
    const loadOf = (part: string) => {
      const [, l, e] = /^L(\d+)\/E(\d+)$/.exec(part)!.map(Number);
      const replicas = plan.layers[l!]!.phy2log.filter((x) => x === e).length;
      return expected[l!]![e!]! / replicas;
    };
    for (let i = 1; i < call.parts.length; i++) {
      assert.ok(loadOf(call.parts[i - 1]!) >= loadOf(call.parts[i]!));
    }
  }
  // Every replica of the hot experts is warmed on its backend.
  const warmedOn = new Set(
    p.warmCalls.flatMap((c) => c.parts.map((part) => `${c.backend} ${part}`)),
  );
  plan.layers[0]!.phy2log.forEach((expert, slot) => {
    if (expert > 1) return;
    const backend = plan.backends[Math.floor(slot / plan.slotsPerBackend)]!.id;
    assert.ok(warmedOn.has(`${backend} L0/E${expert}`));
  });
  assert.deepEqual(decision.warmed.map((w) => w.backend).sort(), IDS);
  // ceil(500 / (200 · 0.8)) = 4 backends, published.
  assert.equal(decision.recommendation?.target, 4);
  assert.equal(p.published.length, 1);
  assert.equal(decision.scaler?.status, "reported");
  const line = p.f.logger.find("prewarm")[0]!;
  assert.equal(line.level, "info");
  assert.equal(line.fields["trigger"], "overload");
});

Deno.test("runPrewarm() pre-warms when an event's lead time begins, for the event's mix", async () => {
  await using p = await prewarmFixture();
  const now = p.f.clock.now();
  p.pool.load = poolLoad(now, IDS, 10, 0.5); // capacity 20 per backend
  p.traffic.forecast = flatForecast(now, 15 * 60_000, 4); // far below 32
  p.traffic.mix = { code: 1 };
  p.traffic.affinity = AFFINITY;
  const event = {
    name: "promo",
    start: now + 30 * 60_000, // beyond the 15-minute horizon
    end: now + 90 * 60_000,
    multiplier: 5,
    mix: { chat: 1 },
    leadTimeMs: 45 * 60_000,
  };
  // Before the lead time: nothing.
  p.events.list = [{ ...event, start: now + 50 * 60_000 }];
  const early = await runPrewarm(p.deps, now);
  assert.equal(early.trigger, "none");
  assert.equal(p.warmCalls.length, 0);
  // Lead time begun: pre-warm for 4 × 5 = 20 tokens/s of "chat", although 20 < 32.
  p.events.list = [event];
  const decision = await runPrewarm(p.deps, now);
  assert.equal(decision.trigger, "event_lead");
  assert.equal(decision.outcome, "prewarmed");
  assert.match(decision.reason, /lead time of event "promo" has begun/);
  assert.equal(decision.predicted?.tokensPerS, 20);
  assert.equal(decision.predicted?.peakAt, event.start);
  assert.deepEqual(decision.predicted?.mix, { chat: 1 });
  assert.deepEqual(decision.predicted?.events, ["promo"]);
  const parts = new Set(p.warmCalls.flatMap((c) => c.parts));
  assert.deepEqual([...parts].sort(), ["L0/E0", "L0/E1", "L1/E6", "L1/E7"]);
  assert.equal(decision.recommendation?.target, 2); // ceil(20 / 16)
});

Deno.test("runPrewarm() keeps a plan that already balances the prediction, and still warms", async () => {
  await using p = await prewarmFixture();
  const now = p.f.clock.now();
  p.pool.load = poolLoad(now, IDS, 100, 0.5);
  p.traffic.forecast = flatForecast(now, 15 * 60_000, 500);
  p.traffic.mix = { chat: 1 };
  p.traffic.affinity = AFFINITY;
  const first = await runPrewarm(p.deps, now);
  assert.equal(first.plan?.action, "switched");
  const second = await runPrewarm(p.deps, now + 60_000);
  assert.equal(second.plan?.action, "kept_current");
  assert.equal(second.plan?.version, first.plan?.version);
  assert.equal(p.warmCalls.length, 4);
  assert.deepEqual(p.warmCalls.slice(2), p.warmCalls.slice(0, 2));
});

Deno.test("runPrewarm() remembers capacity, and reports a pinned plan as not staged", async () => {
  await using p = await prewarmFixture();
  const now = p.f.clock.now();
  p.pool.load = poolLoad(now, IDS, 100, 0.5);
  p.traffic.forecast = flatForecast(now, 15 * 60_000, 100);
  const memory = { capacity: null };
  await runPrewarm(p.deps, now, memory);
  p.pool.load = poolLoad(now, IDS, 0, 0); // idle: no estimate
  p.traffic.forecast = flatForecast(now, 15 * 60_000, 1000);
  p.traffic.affinity = AFFINITY;
  p.traffic.mix = { chat: 1 };
  await p.f.balancer.pin((await p.f.current())!.version);
  const decision = await runPrewarm(p.deps, now + 60_000, memory);
  assert.equal(decision.capacity.source, "remembered");
  assert.equal(decision.capacity.perBackendTokensPerS, 200);
  assert.equal(decision.trigger, "overload");
  assert.equal(decision.plan?.action, "failed");
  assert.match(decision.plan?.error ?? "", /pinned/);
  assert.equal(p.warmCalls.length, 2, "warms under the pinned plan");
  // ceil(1000 / 160) = 7 ≤ 8.
  assert.equal(decision.recommendation?.target, 7);
});

Deno.test("runPrewarm() without affinity recommends but stages nothing", async () => {
  await using p = await prewarmFixture({ max_backends: 3 });
  const now = p.f.clock.now();
  p.pool.load = poolLoad(now, IDS, 100, 0.5);
  p.traffic.forecast = flatForecast(now, 15 * 60_000, 5000);
  const decision = await runPrewarm(p.deps, now);
  assert.equal(decision.outcome, "skipped");
  assert.match(decision.reason, /no request-type → expert affinity/);
  assert.equal(p.warmCalls.length, 0);
  assert.equal(decision.recommendation?.target, 3, "clamped to max_backends");
  assert.equal(p.published.length, 1);
  assert.equal(MODEL.experts, 8);
});

Deno.test("runPrewarm() places for max(observed, predicted) when the balancer's observed load is given", async () => {
  await using p = await prewarmFixture();
  const now = p.f.clock.now();
  p.pool.load = poolLoad(now, IDS, 100, 0.5);
  p.traffic.forecast = flatForecast(now, 15 * 60_000, 500);
  p.traffic.mix = { chat: 1 };
  p.traffic.affinity = AFFINITY;
  // Observed: layer 0's experts 2 and 3 run hot now (the prediction gives them nothing).
  const observed = [[0, 0, 400, 400, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0]];
  p.deps.observedExpertLoad = (model) => model === MODEL.name ? observed : null;
  // By hand: 500 tokens/s of chat, top-2: 500 each on L0/E0, E1 and on L1/E6, E7.
  const blended = [[500, 500, 400, 400, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 500, 500]];
  const preview = await p.f.balancer.preview(blended);
  const decision = await runPrewarm(p.deps, now);
  assert.equal(decision.plan?.action, "switched");
  const plan = (await p.f.current())!;
  assert.deepEqual(plan.layers.map((l) => l.phy2log), preview.proposed.phy2log);
  // The decision still reports (and the job still holds) the prediction itself.
  assert.deepEqual(decision.predicted!.expertLoad[0], [500, 500, 0, 0, 0, 0, 0, 0]);
});
