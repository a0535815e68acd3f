/** @module The analysis endpoints over in-memory KV holding crafted traffic and backend series. */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { ApiError, errorResponse } from "../../../shared/errors.ts";
import type { PoolLoad } from "../../control/load/pool_load.ts";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { emptyModelBucket, type ModelBucket } from "../../control/traffic/bucket_traffic.ts";
import { TrafficStore } from "../../control/traffic/traffic_store.ts";
import { analysisRoutes } from "./analysis_routes.ts";
import { BackendSeries } from "./backend_series.ts";
import { backendLoadOf } from "../../../tests/_support/router/pool_loads.ts";

const T0 = 1_700_000_040_000;
const MIN = 60_000;

function bucket(expertTokens: number[][], affinity: Record<string, number[][]>): ModelBucket {
  const b = emptyModelBucket();
  expertTokens.forEach((tokens, layer) => b.expertTokens.set(layer, tokens));
  for (const [type, layers] of Object.entries(affinity)) {
    b.affinity.set(type, new Map(layers.map((counts, layer) => [layer, counts])));
    b.volume.types[type] = { requests: 1, tokens: 1 };
  }
  return b;
}

async function setup() {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0 + 3 * MIN);
  const traffic = new TrafficStore(kv, { clock, bucketMs: MIN, retentionMs: 3_600_000 });
  await traffic.write("m", T0, bucket([[4, 0, 0, 0], [1, 1, 1, 1]], { code: [[0, 0, 0, 8]] }));
  await traffic.write(
    "m",
    T0 + MIN,
    bucket([[2, 2, 2, 2], [0, 0, 0, 0]], { chat: [[1, 1, 1, 1], [2, 2, 2, 2]] }),
  );
  const backends = new BackendSeries(kv, {
    clock,
    logger: new MemoryLogger(),
    bucketMs: MIN,
    retentionMs: 3_600_000,
    roundIntervalMs: 1000,
  });
  const base = backendLoadOf({ id: "x", requestsPerS: 1 });

  for (let s = 0; s < 10; s++) {
    backends.recordRound(
      {
        at: T0 + s * 1000,
        models: [],
        pool: { reporting: 2, balancedness: 1, utilisationBalancedness: 1, utilisationCv: 0 },
        backends: [
          { ...base, name: "b1", utilisation: 0.5, tokensPerS: 100, powerW: null },
          { ...base, name: "b2", utilisation: 0.25, tokensPerS: 50, powerW: null },
        ],
      } satisfies PoolLoad,
    );
  }
  await backends.settled();
  const app = new Hono();
  app.onError((error) => {
    if (error instanceof ApiError) return errorResponse(error);
    throw error;
  });
  app.route(
    "/api/analysis",
    analysisRoutes({ kv, traffic, backends, clock, servedModels: () => ["m"] }),
  );
  const get = async (path: string) => {
    const response = await app.request(path);
    return { status: response.status, body: await response.json() };
  };
  return { get, close: () => kv.close() };
}

const RANGE = `from=${T0}&to=${T0 + 2 * MIN}`;

Deno.test("GET /api/analysis/activation serves series, totals and the top-N per layer", async () => {
  const { get, close } = await setup();
  try {
    const { status, body } = await get(`/api/analysis/activation?${RANGE}&top=2`);
    assert.equal(status, 200);
    assert.equal(body.model, "m");
    assert.deepEqual(body.buckets, [T0, T0 + MIN]);
    const [l0, l1] = body.layers;
    assert.deepEqual(l0.series, [[4, 2], [0, 2], [0, 2], [0, 2]]);
    assert.deepEqual(l0.total_tokens, [4, 8]);
    assert.deepEqual(l0.top, [
      { expert: 0, total: 6, share: 0.5, series: [4, 2] },
      { expert: 1, total: 2, share: 0.166667, series: [0, 2] },
    ]);
    assert.deepEqual(l1.expert_totals, [1, 1, 1, 1]);
    const one = await get(`/api/analysis/activation?${RANGE}&layer=1`);
    assert.deepEqual(one.body.layers.map((l: { layer: number }) => l.layer), [1]);
  } finally {
    close();
  }
});

Deno.test("GET /api/analysis/correlation gives shares and concentration per request type", async () => {
  const { get, close } = await setup();
  try {
    const { body } = await get(`/api/analysis/correlation?${RANGE}`);
    assert.equal(body.layers, 2);
    assert.equal(body.experts, 4);
    const [chat, code] = body.request_types;
    assert.equal(code.request_type, "code");
    assert.deepEqual(code.layers[0].shares, [0, 0, 0, 1]);
    assert.equal(code.layers[0].concentration, 1);
    assert.equal(code.layers[1].concentration, null);
    assert.equal(code.concentration, 1);
    assert.equal(chat.concentration, 0);
    assert.deepEqual(chat.layers[1].shares, [0.25, 0.25, 0.25, 0.25]);
  } finally {
    close();
  }
});

Deno.test("GET /api/analysis/efficiency says power is unavailable and invents no joules", async () => {
  const { get, close } = await setup();
  try {
    const { body } = await get(`/api/analysis/efficiency?${RANGE}`);
    assert.equal(body.power, "unavailable (no nvidia-smi on the backends)");
    assert.equal(body.tokens_per_joule, null);
    assert.deepEqual(body.pool.tokens_s, [150, null]);
    assert.deepEqual(body.pool.utilisation, [0.375, null]);
    assert.deepEqual(body.backends.map((b: { backend: string }) => b.backend), ["b1", "b2"]);
    assert.equal(body.backends[0].totals.tokens, 1000);
    assert.deepEqual(body.pool.tokens_per_joule, [null, null]);
  } finally {
    close();
  }
});

Deno.test("GET /api/analysis/balance gives per-bucket stats and null for idle layers", async () => {
  const { get, close } = await setup();
  try {
    const { body } = await get(`/api/analysis/balance?${RANGE}`);
    const [first, second] = body.buckets;
    assert.deepEqual(first.layers[0], {
      layer: 0,
      tokens: 4,
      cv: 1.732051,
      top10_share: 1,
    });
    // Expert skew only: the across-experts mean ÷ max is not reported (balancedness is
    // across backends, /api/load).
    assert.equal("balancedness" in first.layers[0], false);
    assert.equal(first.layers[1].top10_share, 0.25);
    assert.equal(first.top10_share, 0.625);
    assert.equal(second.layers[1].top10_share, null);
    assert.equal(second.top10_share, 0.25);
    // Over the range: layer 0 summed is [6, 2, 2, 2].
    assert.equal(body.range.layers[0].top10_share, 0.5);
  } finally {
    close();
  }
});

Deno.test("the analysis endpoints answer 400 naming the bad parameter, 404 for a model", async () => {
  const { get, close } = await setup();
  try {
    const cases: [string, RegExp][] = [
      ["/api/analysis/activation?layer=x", /layer must be a non-negative integer/],
      ["/api/analysis/activation?layer=2", /layer must be below 2/],
      ["/api/analysis/activation?top=0", /top must be an integer from 1 to 1000/],
      ["/api/analysis/balance?from=yesterday", /from must be an RFC3339 time/],
      ["/api/analysis/efficiency?to=soon", /to must be an RFC3339 time/],
      [`/api/analysis/correlation?from=${T0 + MIN}&to=${T0}`, /from must be before to/],
      ["/api/analysis/balance?from=30d", /from is too far before to/],
    ];
    for (const [path, message] of cases) {
      const { status, body } = await get(path);
      assert.equal(status, 400, path);
      assert.equal(body.code, "bad_request");
      assert.match(body.error, message, path);
    }
    const missing = await get("/api/analysis/balance?model=nope");
    assert.equal(missing.status, 404);
    assert.match(missing.body.error, /model "nope"/);
    // A duration before `to` works as `from`.
    const recent = await get(`/api/analysis/activation?from=2m&to=${T0 + 2 * MIN}`);
    assert.deepEqual(recent.body.buckets, [T0, T0 + MIN]);
  } finally {
    close();
  }
});
