/**
 * `/metrics` end to end: a real router and two backends with the tiny model serve a few
 * inferences; the router's request counters match what was sent, the backends' routed
 * expert counters add up to rows × top-k × layers, the backend endpoint wants the
 * internal token, and both bodies pass `promtool check metrics` without lint problems.
 */
import assert from "node:assert/strict";
import {
  type Exposition,
  findSamples,
  parseExposition,
  sumSamples,
} from "../shared/metrics/parse_exposition.ts";
import { promtoolAvailable, promtoolCheckMetrics } from "./_support/system_tools.ts";
import { UNKNOWN_MODEL } from "../router/operate/metrics/request_metrics.ts";
import { startPool } from "../tools/pool/processes.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

const promtool = await promtoolAvailable();
const ROWS = [1, 3, 4, 2, 5, 7];

async function scrape(url: string, token?: string): Promise<{ body: string; type: string }> {
  const response = await fetch(`${url}/metrics`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const body = await response.text();
  assert.equal(response.status, 200, `${url}/metrics: ${body}`);
  return { body, type: response.headers.get("content-type") ?? "" };
}

function one(text: Exposition, name: string, labels: Record<string, string> = {}): number {
  const found = findSamples(text, name, labels);
  assert.equal(found.length, 1, `${name} ${JSON.stringify(labels)}: ${JSON.stringify(found)}`);
  return found[0]!.value;
}

Deno.test({
  name: "router and backend /metrics count what was served and pass promtool",
  // Without promtool the lint half cannot run: fail in CI, skip elsewhere.
  ignore: !promtool && Deno.env.get("CI") === undefined,
  async fn() {
    assert.ok(promtool, "promtool is missing: apt-get install -y prometheus");
    const modelDir = await makeTinyModel();
    const pool = await startPool({ modelDir, backends: 2 });
    try {
      // Step 1: traffic — successful requests and one for a model nobody serves.
      for (const [i, rows] of ROWS.entries()) {
        const tokens = Float32Array.from({ length: rows * TINY.dModel }, (_, j) => Math.sin(i + j));
        const call = await infer(pool.router.url, TINY.name, tokens, TINY.dModel);
        assert.equal(call.status, 200);
      }
      const missing = await infer(pool.router.url, "no-such-model", new Float32Array(32), 32);
      assert.equal(missing.status, 404);

      // Step 2: the router.
      const router = await scrape(pool.router.url);
      assert.match(router.type, /^text\/plain; version=0\.0\.4/);
      const r = parseExposition(router.body);
      assert.equal(one(r, "switchyard_build_info"), 1);
      assert.equal(
        one(r, "switchyard_router_requests_total", { model: TINY.name, code: "200" }),
        ROWS.length,
      );
      assert.equal(
        one(r, "switchyard_router_requests_total", { model: UNKNOWN_MODEL, code: "404" }),
        1,
      );
      assert.equal(
        one(r, "switchyard_router_request_duration_seconds_count", {
          model: TINY.name,
          code: "200",
        }),
        ROWS.length,
      );
      assert.equal(one(r, "switchyard_router_backend_up", { backend: "backend-1" }), 1);
      assert.equal(one(r, "switchyard_router_backend_up", { backend: "backend-2" }), 1);
      assert.equal(sumSamples(r, "switchyard_router_backend_in_flight_requests"), 0);
      // Alert state (every kind listed) and the log pipeline's counters are wired.
      assert.deepEqual(
        findSamples(r, "switchyard_alerts_firing").map((s) => s.labels["kind"]).sort(),
        [
          "backend_down",
          "balance_low",
          "expert_hot",
          "latency_slo",
          "rebalance_stalled",
          "saturation",
          "shedding",
        ],
      );
      assert.equal(one(r, "switchyard_log_lines_dropped_total"), 0);
      const balancedness = one(r, "switchyard_pool_balancedness");
      assert.ok(balancedness > 0 && balancedness <= 1, `balancedness ${balancedness}`);

      // Step 3: the backends, behind the internal token.
      const denied = await fetch(`${pool.backends[0]!.url}/metrics`);
      await denied.body?.cancel();
      assert.equal(denied.status, 401);
      const bodies = await Promise.all(pool.backends.map((b) => scrape(b.url, pool.token)));
      const backends = bodies.map(({ body }) => parseExposition(body));
      const total = (name: string, labels: Record<string, string> = {}) =>
        backends.reduce((sum, text) => sum + sumSamples(text, name, labels), 0);
      const rows = ROWS.reduce((a, b) => a + b, 0);
      assert.equal(total("switchyard_backend_requests_total"), ROWS.length);
      assert.equal(total("switchyard_backend_rows_total"), rows);
      // Every row goes to top_k routed experts in every layer, executed once somewhere.
      assert.equal(total("switchyard_expert_tokens_total"), rows * TINY.topK * TINY.layers);
      for (const text of backends) {
        assert.equal(
          findSamples(text, "switchyard_expert_tokens_total").length,
          TINY.layers * TINY.experts,
          "one series per layer × expert, idle experts included",
        );
        // One layer execution per micro-batch of a layer (the layer path).
        assert.equal(
          one(text, "switchyard_microbatch_size_groups_count", { kind: "layer" }),
          one(text, "switchyard_microbatch_size_groups_bucket", { kind: "layer", le: "+Inf" }),
        );
        assert.equal(one(text, "switchyard_execution_provider_info", { provider: "cpu" }), 1);
        assert.equal(one(text, "switchyard_executor_slots"), 1);
        assert.ok(one(text, "switchyard_process_resident_memory_bytes") > 0);
      }
      assert.ok(total("switchyard_executor_busy_seconds_total") > 0);
      // An expert's executions are the layer executions it took rows in: at most all of them.
      const layerExecutions = total("switchyard_microbatch_size_groups_count", { kind: "layer" });
      assert.ok(layerExecutions >= TINY.layers, `${layerExecutions} layer executions`);
      assert.ok(total("switchyard_expert_executions_total") <= layerExecutions * TINY.experts);

      // Step 4: promtool, on what was served.
      const served = {
        router: router.body,
        "backend-1": bodies[0]!.body,
        "backend-2": bodies[1]!.body,
      };
      for (const [name, body] of Object.entries(served)) {
        const result = await promtoolCheckMetrics(body);
        assert.deepEqual(result, { code: 0, output: "" }, `${name}: ${result.output}`);
      }
    } finally {
      await pool.close();
      await Deno.remove(modelDir, { recursive: true });
    }
  },
});
