/**
 * @module One vocabulary, one number: the whole router (`buildRouter`) over three fake
 * backends whose layer-0 expert work sits mostly on one of them, at one frozen moment.
 * The header (the dashboard snapshot through the page's own `balanceText`), the plan
 * panel (`planView`), the advisor, the alerts and `/metrics` must name the same
 * balancedness (across backends) and the same expert skew (across experts), and the
 * expert skew must not be what they call balancedness.
 */
import assert from "node:assert/strict";
import { resolveConfig } from "../../shared/config.ts";
import { buildRouter } from "./server.ts";
import { ManualClock } from "../../tests/_support/router/manual_clock.ts";
import { MemoryLogger } from "../../shared/logging/memory_logger.ts";
import { FakeBackend, FakeNetwork } from "../../tests/_support/router/fake_backend.ts";
import { fakeLoadReport } from "../../tests/_support/router/load_reports.ts";
import { TEST_TOKEN } from "../../tests/_support/router/harness.ts";
import { findSamples, parseExposition } from "../../shared/metrics/parse_exposition.ts";
import { balanceText, planView } from "../operate/dashboard/static/page_model.js";

const ADMIN = "admin-token-0123456789abcdef";
/** Expert tokens per second each backend runs, `[layer][expert]`. */
const RATES = [
  [[300, 20, 0, 0], [50, 50, 50, 50]],
  [[50, 20, 30, 0], [50, 50, 50, 50]],
  [[10, 10, 10, 0], [50, 50, 50, 50]],
];

Deno.test("header, plan panel, advisor, alerts and /metrics agree at one snapshot", async () => {
  const backends = RATES.map((_, i) =>
    new FakeBackend({ id: `127.0.0.1:${9101 + i}`, internalToken: TEST_TOKEN })
  );
  const clock = new ManualClock();
  const start = clock.now();
  backends.forEach((backend, i) => {
    // Cumulative counters at the clock's time: a steady rate per expert.
    backend.loadReport = () => {
      const seconds = (clock.now() - start) / 1000;
      return fakeLoadReport({
        backend: `backend-${i + 1}`,
        at: clock.now(),
        uptimeMs: 60_000 + clock.now() - start,
        busyMs: seconds * 100,
        expertTokens: RATES[i]!.map((layer) => layer.map((rate) => Math.round(rate * seconds))),
      });
    };
  });
  const config = resolveConfig({
    fileText: JSON.stringify({
      router: { policy: "round_robin", backends: backends.map((b) => b.url) },
      auth: { internal_token: TEST_TOKEN, admin_token: ADMIN },
      // Operator-driven placement: no plan switches to stage on the fakes.
      expert_balancer: { enabled: false },
      alerts: { raise_after: 1 },
    }),
  });
  const kv = await Deno.openKv(":memory:");
  const router = await buildRouter(config, {
    fetch: new FakeNetwork(backends).fetch,
    clock,
    logger: new MemoryLogger(),
    kv,
    registerCron: false,
  });
  try {
    await router.start();
    for (let i = 0; i < 4; i++) await clock.advance(1000);
    await router.load.pollNow();
    await router.alerts.settled();
    // From here the clock stands still: every read below sees the same round.
    const get = async (path: string) => {
      const response = await router.app.fetch(new Request(`http://router${path}`));
      assert.equal(response.status, 200, `${path}: ${response.status}`);
      return path === "/metrics" ? await response.text() : await response.json();
    };
    const load = await get("/api/load");
    const snapshot = await get("/api/dashboard/snapshot");
    const advice = await get("/api/advice");
    const alerts = await get("/api/alerts");
    const metrics = parseExposition(await get("/metrics"));
    assert.equal(snapshot.load.at, load.at, "one round");

    // The expected numbers, by hand. Layer 0 per backend: 320, 100, 30 tokens/s →
    // mean 150 ÷ max 320; layer 1 even. Pool: 520, 300, 230 → 350 ÷ 520.
    const layer0 = 150 / 320;
    const pool = 350 / 520;
    const close = (a: number, b: number, what: string) =>
      assert.ok(Math.abs(a - b) <= 0.0005, `${what}: ${a} vs ${b}`);
    close(load.pool.balancedness, pool, "/api/load pool");
    assert.deepEqual(load.pool.worst_layer, {
      model: "tiny",
      layer: 0,
      balancedness: Math.round(layer0 * 1000) / 1000,
    });
    // Expert skew of layer 0 (experts 360, 50, 40, 0 tokens/s): the top one carries 0.8.
    const tinyLayers = load.models[0].layers;
    close(tinyLayers[0].expert_skew.top10_share, 360 / 450, "layer 0 skew");
    close(tinyLayers[0].balancedness, layer0, "layer 0 balancedness");

    // Header: the page's own formatting of the snapshot it receives.
    const header = balanceText(snapshot.load);
    assert.equal(header, `${pool.toFixed(3)} (worst L0 ${layer0.toFixed(3)})`);
    // Plan panel: "balancedness now" is the header's text from the same snapshot.
    const panel = planView(snapshot.plan, 0, snapshot.load);
    const facts = new Map((panel?.facts ?? []) as [string, string][]);
    assert.equal(facts.get("balancedness now"), header);
    // Advisor: the measured line and its details carry the same numbers.
    const replacement = advice.advice.find((a: { id: string }) => a.id === "replacement");
    assert.ok(
      replacement.evidence.includes(`balancedness now (measured): ${header}`),
      replacement.evidence.join("\n"),
    );
    close(replacement.details.balancedness_now.pool, pool, "advisor pool");
    close(replacement.details.balancedness_now.worst_layer.balancedness, layer0, "advisor worst");
    // Alerts: balance_low on layer 0 with the same value, and its message says so.
    const low = alerts.active.filter((a: { kind: string }) => a.kind === "balance_low");
    assert.deepEqual(low.map((a: { subject: string }) => a.subject), ["tiny L0"]);
    close(low[0].value, layer0, "alert value");
    assert.match(low[0].message, new RegExp(`has balancedness ${layer0.toFixed(3)} \\(below`));
    // /metrics: the same per-layer, pool and worst-layer values, and the skew apart.
    const one = (name: string, labels: Record<string, string> = {}) => {
      const found = findSamples(metrics, name, labels);
      assert.equal(found.length, 1, `${name} ${JSON.stringify(labels)}`);
      return found[0]!.value;
    };
    close(one("switchyard_layer_balancedness", { model: "tiny", layer: "0" }), layer0, "metric L0");
    close(one("switchyard_layer_balancedness", { model: "tiny", layer: "1" }), 1, "metric L1");
    close(one("switchyard_pool_balancedness"), pool, "metric pool");
    close(one("switchyard_pool_worst_layer_balancedness"), layer0, "metric worst");
    close(
      one("switchyard_layer_expert_skew_top10_share", { model: "tiny", layer: "0" }),
      360 / 450,
      "metric skew",
    );
    // The trend's latest point is the same moment's pool and worst layer.
    const last = snapshot.trend.at(-1);
    close(last.pool, pool, "trend pool");
    close(last.worst, layer0, "trend worst");
  } finally {
    await router.stop();
    kv.close();
  }
});
