/**
 * The analysis endpoints on a live stack (router + 2 backends, tiny model, 1 s traffic
 * buckets, state in a KV file this test also opens): typed traffic of three request
 * types, then activation, correlation, efficiency and balance agree with each other,
 * with the counts sent and with what the traffic store holds; `/api/doctor`,
 * `/api/advice` and the two pages answer. Prints trimmed example bodies.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { BackendSeries } from "../router/operate/analysis/backend_series.ts";
import { efficiency } from "../router/operate/analysis/efficiency.ts";
import { MemoryLogger } from "../shared/logging/memory_logger.ts";
import { systemClock } from "../router/runtime/clock.ts";
import { TrafficStore } from "../router/control/traffic/traffic_store.ts";
import { createRandom } from "../tools/model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { startPool } from "../tools/pool/processes.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { waitFor } from "./_support/wait_for.ts";

const BUCKET_MS = 1000;
const TYPES = ["chat", "code", "math"] as const;

function close(actual: number, expected: number, tolerance: number, what: string) {
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} vs ${expected}`);
}

/** A body trimmed for the log: long arrays cut to their first few items. */
function trim(value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) {
    const head = value.slice(0, depth > 2 ? 3 : 4).map((v) => trim(v, depth + 1));
    return value.length > head.length ? [...head, `… ${value.length} items`] : head;
  }
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, trim(v, depth + 1)]));
  }
  return value;
}

Deno.test({
  name: "the analysis endpoints agree with the traffic sent and the traffic store",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const modelDir = await makeTinyModel();
  const stateDir = await Deno.makeTempDir({ prefix: "switchyard-analysis-" });
  const kvPath = join(stateDir, "state.sqlite3");
  const demo = (await loadDemoTraffic(modelDir))!;
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: { SWITCHYARD_TRAFFIC__BUCKET: "1s", SWITCHYARD_STATE__KV: kvPath },
  });
  const base = pool.router.url;
  const get = async (path: string) => {
    const response = await fetch(`${base}${path}`);
    return { status: response.status, body: await response.json() };
  };
  try {
    // Step 1: wait until both backends report rates, so every request is measured.
    await waitFor("two reporting backends", async () => {
      const { body } = await get("/api/load");
      return body.pool.backends_reporting === 2 ? true : undefined;
    }, { intervalMs: 200 });
    const start = Date.now();

    // Step 2: typed traffic, a different row count per type so the counts tell them apart.
    const rowsPerRequest = { chat: 2, code: 3, math: 4 } as const;
    const sent = { chat: 0, code: 0, math: 0 };
    const random = createRandom(11);
    for (let round = 0; round < 24; round++) {
      await Promise.all(TYPES.map(async (type) => {
        const rows = rowsPerRequest[type];
        const call = await infer(
          base,
          TINY.name,
          demoTokens(demo, type, rows, random),
          TINY.dModel,
          {
            requestType: type,
          },
        );
        assert.equal(call.status, 200, JSON.stringify(call.error));
        sent[type] += rows;
      }));
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    // Step 3: let the rates fall back to 0 and the buckets close and flush.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const to = Math.floor(Date.now() / BUCKET_MS) * BUCKET_MS - BUCKET_MS;
    const range = `from=${start - 2 * BUCKET_MS}&to=${to}`;

    // Step 4: correlation — exact selections per type, shares sum to 1 per layer.
    const correlation = await get(`/api/analysis/correlation?${range}`);
    assert.equal(correlation.status, 200);
    assert.equal(correlation.body.model, TINY.name);
    assert.equal(correlation.body.layers, TINY.layers);
    assert.equal(correlation.body.experts, TINY.experts);
    assert.deepEqual(
      correlation.body.request_types.map((t: { request_type: string }) => t.request_type),
      [...TYPES],
    );
    for (const type of correlation.body.request_types) {
      for (const layer of type.layers) {
        assert.equal(layer.selections, sent[type.request_type as keyof typeof sent] * TINY.topK);
        const sum = layer.shares.reduce((s: number, v: number) => s + v, 0);
        close(sum, 1, 1e-5, `${type.request_type} layer ${layer.layer} shares`);
        assert.ok(layer.concentration >= 0 && layer.concentration <= 1);
      }
    }

    // Step 5: activation equals the traffic store's expert series over the same range.
    const activation = await get(`/api/analysis/activation?${range}&top=3`);
    assert.equal(activation.status, 200);
    const kv = await Deno.openKv(kvPath);
    try {
      const store = new TrafficStore(kv, { clock: systemClock, bucketMs: BUCKET_MS });
      for (const layer of activation.body.layers) {
        assert.equal(layer.experts, TINY.experts);
        for (let expert = 0; expert < TINY.experts; expert++) {
          const values = await store.values(
            { kind: "expert", model: TINY.name, layer: layer.layer, expert },
            start - 2 * BUCKET_MS,
            to,
          );
          const stored = values.reduce((s, v) => s + v, 0);
          close(layer.expert_totals[expert], stored, 0.01, `layer ${layer.layer} expert ${expert}`);
        }
        const total = layer.expert_totals.reduce((s: number, v: number) => s + v, 0);
        close(layer.total_tokens.reduce((s: number, v: number) => s + v, 0), total, 0.05, "totals");
        // Rates × round interval approximate the exact selections sent (loose: rounds jitter).
        const selections = (sent.chat + sent.code + sent.math) * TINY.topK;
        assert.ok(
          total > 0.5 * selections && total < 1.5 * selections,
          `${total} vs ${selections}`,
        );
        assert.equal(layer.top.length, 3);
        assert.ok(layer.top[0].total >= layer.top[1].total);
      }

      // Step 6: efficiency equals the backend series recomputed from KV.
      const eff = await get(`/api/analysis/efficiency?${range}`);
      assert.equal(eff.status, 200);
      const series = new BackendSeries(kv, {
        clock: systemClock,
        logger: new MemoryLogger(),
        bucketMs: BUCKET_MS,
        retentionMs: 14 * 86_400_000,
        roundIntervalMs: 1000,
      });
      const read = await series.read(start - 2 * BUCKET_MS, to);
      const expected = efficiency(read.backends, read.buckets.length);
      assert.deepEqual(eff.body.backends.map((b: { backend: string }) => b.backend), [
        "backend-1",
        "backend-2",
      ]);
      close(eff.body.pool.totals.tokens, expected.pool.totals.tokens, 0.01, "pool tokens");
      assert.ok(eff.body.pool.totals.tokens > 0);
      const sumBackends = eff.body.backends.reduce(
        (s: number, b: { totals: { tokens: number } }) => s + b.totals.tokens,
        0,
      );
      close(eff.body.pool.totals.tokens, sumBackends, 0.01, "pool = Σ backends");
      assert.ok(eff.body.pool.totals.utilisation > 0 && eff.body.pool.totals.utilisation <= 1);
      const load = (await get("/api/load")).body;
      if (load.backends.every((b: { power_w: number | null }) => b.power_w === null)) {
        assert.equal(eff.body.power, "unavailable (no nvidia-smi on the backends)");
        assert.equal(eff.body.tokens_per_joule, null);
      } else {
        assert.ok(eff.body.tokens_per_joule > 0, "power is read: tokens per joule is measured");
      }

      // Step 7: balance per bucket covers the same tokens as activation.
      const balance = await get(`/api/analysis/balance?${range}`);
      assert.equal(balance.status, 200);
      assert.deepEqual(
        balance.body.buckets.map((b: { at: number }) => b.at),
        activation.body.buckets,
      );
      balance.body.buckets.forEach(
        (bucket: { tokens: number; top10_share: number | null }, i: number) => {
          const tokens = activation.body.layers.reduce(
            (s: number, l: { total_tokens: number[] }) => s + l.total_tokens[i]!,
            0,
          );
          close(bucket.tokens, tokens, 0.01, `bucket ${i} tokens`);
          if (tokens > 0) assert.ok(bucket.top10_share! > 0 && bucket.top10_share! <= 1);
          else assert.equal(bucket.top10_share, null);
        },
      );
      assert.ok(balance.body.range.top10_share > 0 && balance.body.range.top10_share <= 1);

      // Step 8: the doctor, the advisor, the pages, and a bad parameter.
      const doctor = await get("/api/doctor");
      assert.equal(doctor.status, 200);
      assert.equal(doctor.body.checks.length, 5);
      assert.equal(doctor.body.checks.find((c: { id: string }) => c.id === "experts").value, 8);
      // A short test rarely reaches the doctor's minimum (100 requests over 60 s).
      assert.match(doctor.body.verdict, /^(deploy now|pilot|not needed|not enough data)$/);
      assert.equal(doctor.body.verdict === "not enough data", doctor.body.insufficient !== null);
      const advice = await get("/api/advice");
      assert.equal(advice.status, 200);
      assert.ok(advice.body.advice.length > 0);
      for (const item of advice.body.advice) {
        assert.ok(item.evidence.length > 0 && item.expected_effect && item.risk && item.apply);
      }
      for (const path of ["/dashboard/analysis", "/dashboard/advisor"]) {
        const page = await fetch(`${base}${path}`);
        assert.equal(page.status, 200);
        assert.match(await page.text(), /\/dashboard\/static\/(analysis|advisor)\.js/);
      }
      const script = await fetch(`${base}/dashboard/static/analysis.js`);
      assert.equal(script.status, 200);
      await script.body?.cancel();
      const bad = await get("/api/analysis/activation?top=many");
      assert.equal(bad.status, 400);
      assert.match(bad.body.error, /top must be an integer/);

      const examples = {
        activation: activation.body,
        correlation: correlation.body,
        efficiency: eff.body,
        balance: balance.body,
        doctor: doctor.body,
        advice: advice.body.advice.map((a: Record<string, unknown>) => ({
          id: a.id,
          recommended: a.recommended,
          apply: a.apply,
          expected_effect: a.expected_effect,
        })),
      };
      for (const [name, body] of Object.entries(examples)) {
        // deno-lint-ignore no-console
        console.log(`${name}: ${JSON.stringify(trim(body))}`);
      }
    } finally {
      kv.close();
    }
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
    await Deno.remove(stateDir, { recursive: true });
  }
});
