import assert from "node:assert/strict";
import { createApp } from "../../serve/app.ts";
import { loadRoutes } from "./load_routes.ts";
import { createPolicy } from "../../serve/entry/create_policy.ts";
import { createHarness } from "../../../tests/_support/router/harness.ts";
import { fakeLoadReport } from "../../../tests/_support/router/load_reports.ts";

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
  const app = createApp({ ...h, fetch: h.network.fetch, policy: createPolicy("p2c") })
    .route(
      "/",
      loadRoutes({ snapshot: () => h.collector.snapshot(), ewma: () => [1.23456, 0, 0, 0] }),
    );

  const response = await app.request("/api/load");
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /application\/json/);
  const body = await response.json();
  assert.deepEqual(body, {
    at: T0 + 1250,
    pool: {
      backends_reporting: 1,
      // One backend of two reporting: a spread over one backend is no data (n/a), not 1.
      balancedness: null,
      worst_layer: null,
      utilisation_balancedness: 1,
      utilisation_cv: 0,
      // The load signal: an older report (no host section) saturates by device time only.
      saturation: 0.3,
      saturation_max: 0.3,
      capacity_tokens_s_per_backend: round(40 / 0.3),
      scale: {
        backends: 1,
        recommended: 1,
        direction: "none",
        demand: 0.3,
        reason: "demand 0.30 backend-equivalents fits 1 backends (pool saturation 0.30)",
      },
      router_shed_s: null,
    },
    backends: [
      {
        id: "127.0.0.1:9001",
        name: "backend-1",
        model: "tiny",
        stale: false,
        healthy: null,
        state: "fresh",
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
        // An older report without resources: unknown, never zero.
        cpu_cores: null,
        net_rx_bytes_s: null,
        net_tx_bytes_s: null,
        accelerator: null,
        power_w: null,
        saturation: {
          value: 0.3,
          bottleneck: "device",
          device_busy: 0.3,
          host_busy: null,
          queue_share: null,
          shed_share: 0,
          queue_wait_ms: null,
          service_ms: null,
          shed_s: 0,
        },
        capacity_tokens_s: round(40 / 0.3),
        capacity_source: "extrapolated",
        residency: null,
        cold_starts: null,
        cold_starts_per_min: null,
      },
      {
        id: "127.0.0.1:9002",
        name: "127.0.0.1:9002",
        model: null,
        stale: true,
        healthy: null,
        state: "stale",
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
        cpu_cores: null,
        net_rx_bytes_s: null,
        net_tx_bytes_s: null,
        accelerator: null,
        power_w: null,
        saturation: null,
        capacity_tokens_s: null,
        capacity_source: null,
        residency: null,
        cold_starts: null,
        cold_starts_per_min: null,
      },
    ],
    models: [{
      model: "tiny",
      balancedness: null,
      worst_layer: null,
      layers: [
        {
          layer: 0,
          expert_tokens_s: [60, 20, 0, 0],
          balancedness: null,
          // Expert skew across the 4 experts: the top one (10 %, at least one) has 60 of 80.
          expert_skew: {
            top10_share: 0.75,
            cv: round(Math.sqrt(((40 ** 2) + 0 + 2 * 20 ** 2) / 4) / 20),
          },
          ewma_tokens_s: [1.235, 0, 0, 0],
        },
        {
          layer: 1,
          expert_tokens_s: [20, 20, 20, 20],
          balancedness: null,
          expert_skew: { top10_share: 0.25, cv: 0 },
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

Deno.test("GET /api/load shows node resources and, with ?detail=replicas, experts per backend", async () => {
  const h = await createHarness({ backends: 2 });
  const gpu = {
    devices: 1,
    utilisation: 0.42,
    memoryUsedBytes: 1024,
    memoryTotalBytes: 4096,
    powerW: 250.5,
  };
  const resources = (cpuMs: number, bytes: number, accelerator: typeof gpu | null) => ({
    cpuMs,
    netRxBytes: bytes,
    netTxBytes: 2 * bytes,
    accelerator,
    powerW: accelerator?.powerW ?? null,
  });
  let polls = 0;
  h.backends[0]!.loadReport = () =>
    polls++ < 1 ? fakeLoadReport({ at: T0, resources: resources(0, 0, gpu) }) : fakeLoadReport({
      at: T0 + 1000,
      resources: resources(1500, 4000, gpu),
      // Hosts experts 0 and 1 of layer 0 and expert 3 of layer 1.
      expertTokens: [[30, 10], [0, 0, 0, 20]],
    });
  let polls2 = 0;
  h.backends[1]!.loadReport = () =>
    polls2++ < 1
      ? fakeLoadReport({ backend: "backend-2", at: T0, resources: resources(0, 0, null) })
      : fakeLoadReport({
        backend: "backend-2",
        at: T0 + 1000,
        resources: resources(250, 100, null),
        expertTokens: [[0, 10, 0, 40], [5, 5, 5, 5]],
      });
  await h.collector.pollNow();
  await h.clock.advance(1000);
  await h.collector.pollNow();

  const plain = await (await h.app.request("/api/load")).json();
  const [gpuHost, cpuHost] = plain.backends;
  assert.equal(gpuHost.cpu_cores, 1.5);
  assert.equal(gpuHost.net_rx_bytes_s, 4000);
  assert.equal(gpuHost.net_tx_bytes_s, 8000);
  assert.deepEqual(gpuHost.accelerator, {
    utilisation: 0.42,
    memory_used_bytes: 1024,
    memory_total_bytes: 4096,
  });
  assert.equal(gpuHost.power_w, 250.5);
  assert.equal(gpuHost.layers, undefined, "replicas only on request");
  assert.equal(cpuHost.cpu_cores, 0.25);
  assert.equal(cpuHost.accelerator, null, "a CPU-only host: n/a, not zero");
  assert.equal(cpuHost.power_w, null);

  const detailed = await (await h.app.request("/api/load?detail=replicas")).json();
  assert.deepEqual(detailed.backends.map((b: { layers: unknown }) => b.layers), [
    [{ layer: 0, expert_tokens_s: [30, 10, 0, 0] }, { layer: 1, expert_tokens_s: [0, 0, 0, 20] }],
    [{ layer: 0, expert_tokens_s: [0, 10, 0, 40] }, { layer: 1, expert_tokens_s: [5, 5, 5, 5] }],
  ]);
  // The replicas view sums to the per-layer pool vector.
  assert.deepEqual(detailed.models[0].layers[0].expert_tokens_s, [30, 20, 0, 40]);

  const bad = await h.app.request("/api/load?detail=everything");
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /detail must be one of "replicas", got "everything"/);
  await h.close();
});

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
