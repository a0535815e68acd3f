import assert from "node:assert/strict";
import { createApp } from "./app.ts";
import { createPolicy } from "./routing/create_policy.ts";
import { createHarness } from "./testing/harness.ts";
import { fakeLoadReport } from "./testing/load_reports.ts";

const T0 = 1_700_000_000_000;

Deno.test("GET /api/load serves per-backend rates, per-layer expert load and balancedness", async () => {
  const h = await createHarness({ backends: 2 });
  let polls = 0;
  h.backends[0]!.loadReport = () =>
    polls++ === 0 ? fakeLoadReport({ at: T0 }) : fakeLoadReport({
      at: T0 + 1000,
      busyMs: 600,
      tokens: 40,
      requests: 8,
      inFlight: 2,
      queueDepth: 1,
      expertTokens: [[60, 20, 0, 0], [20, 20, 20, 20]],
    });
  h.backends[1]!.mode = "refuse";
  await h.collector.pollNow();
  await h.clock.advance(1000);
  await h.collector.pollNow();
  await h.clock.advance(250);
  const app = createApp({
    ...h,
    fetch: h.network.fetch,
    policy: createPolicy("p2c"),
    load: { snapshot: () => h.collector.snapshot(), ewma: () => [1.23456, 0, 0, 0] },
  });

  const response = await app.request("/api/load");
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /application\/json/);
  const body = await response.json();
  assert.deepEqual(body, {
    at: T0 + 1250,
    pool: { backends_reporting: 1, balancedness: 1, cv: 0, tokens_s_balancedness: 1 },
    backends: [
      {
        id: "127.0.0.1:9001",
        name: "backend-1",
        model: "tiny",
        stale: false,
        error: null,
        report_age_ms: 250,
        utilisation: 0.3,
        tokens_s: 40,
        requests_s: 8,
        in_flight: 2,
        in_flight_rows: 2,
        queue_depth: 8,
        slots: 2,
        execution_provider: "cpu",
        rss_bytes: 1_000_000,
        heap_used_bytes: 500_000,
      },
      {
        id: "127.0.0.1:9002",
        name: "127.0.0.1:9002",
        model: null,
        stale: true,
        error: "connection failed: error sending request: Connection refused (os error 111)",
        report_age_ms: null,
        utilisation: null,
        tokens_s: null,
        requests_s: null,
        in_flight: null,
        in_flight_rows: null,
        queue_depth: null,
        slots: null,
        execution_provider: null,
        rss_bytes: null,
        heap_used_bytes: null,
      },
    ],
    models: [{
      model: "tiny",
      layers: [
        {
          layer: 0,
          expert_tokens_s: [60, 20, 0, 0],
          balancedness: round(80 / 4 / 60),
          cv: round(Math.sqrt(((40 ** 2) + 0 + 2 * 20 ** 2) / 4) / 20),
          ewma_tokens_s: [1.235, 0, 0, 0],
        },
        {
          layer: 1,
          expert_tokens_s: [20, 20, 20, 20],
          balancedness: 1,
          cv: 0,
          ewma_tokens_s: [1.235, 0, 0, 0],
        },
      ],
    }],
  });
  await h.close();
});

Deno.test("GET /api/load before any report lists every backend as stale", async () => {
  const h = await createHarness({ backends: 1 });
  const body = await (await h.app.request("/api/load")).json();
  assert.equal(body.backends[0].stale, true);
  assert.equal(body.backends[0].error, "no report yet");
  assert.deepEqual(body.models, []);
  assert.equal(body.pool.backends_reporting, 0);
  assert.equal(body.models.length, 0);
  await h.close();
});

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
