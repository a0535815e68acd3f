/**
 * Load reports end to end: backends serve `/v2/load`, the router polls them and its
 * `/api/load` shows one request type's preferred experts carrying most of the load.
 */
import assert from "node:assert/strict";
import { LoadReportSchema } from "../shared/load_report.ts";
import { createRandom } from "../tools/model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { startPool } from "../tools/pool/processes.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

const TYPE = "code";

Deno.test("the router's /api/load shows the experts one request type prefers as hot", async () => {
  const modelDir = await makeTinyModel();
  const traffic = (await loadDemoTraffic(modelDir))!;
  // History in memory: the test needs no KV file of its own.
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: { SWITCHYARD_STATE__KV: ":memory:" },
  });
  try {
    // Step 1: ~40 requests of one type, paced over ~2.5 s so that the last full report
    // interval before the query is covered by traffic.
    const random = createRandom(11);
    for (let i = 0; i < 40; i++) {
      const call = await infer(
        pool.router.url,
        TINY.name,
        demoTokens(traffic, TYPE, 4, random),
        TINY.dModel,
        { requestType: TYPE },
      );
      assert.equal(call.status, 200);
      await new Promise((resolve) => setTimeout(resolve, 55));
    }
    // Step 2: backends serve a valid report, behind the internal token.
    const backend = pool.backends[0]!.url;
    const denied = await fetch(`${backend}/v2/load`);
    await denied.body?.cancel();
    assert.equal(denied.status, 401);
    const direct = await fetch(`${backend}/v2/load`, {
      headers: { authorization: `Bearer ${pool.token}` },
    });
    const report = LoadReportSchema.parse(await direct.json());
    assert.equal(report.model, TINY.name);
    assert.ok(report.tokens > 0);
    // Step 3: the router's aggregate.
    const response = await fetch(`${pool.router.url}/api/load`);
    assert.equal(response.status, 200);
    const load = await response.json();
    assert.equal(load.pool.backends_reporting, 2, JSON.stringify(load.backends));
    const layers = load.models.find((m: { model: string }) => m.model === TINY.name).layers;
    assert.equal(layers.length, TINY.layers);
    const layer0: number[] = layers[0].expert_tokens_s;
    assert.equal(layer0.length, TINY.experts);
    const preferred = traffic.preferred_experts[0]![traffic.request_types.indexOf(TYPE)]!;
    const total = layer0.reduce((sum, value) => sum + value, 0);
    const hot = preferred.reduce((sum, expert) => sum + layer0[expert]!, 0);
    assert.ok(total > 0, "layer 0 carried traffic in the last interval");
    assert.ok(hot > total / 2, `preferred ${preferred} carry ${hot} of ${total} tokens/s`);
    // Skewed traffic: the top 10 % of experts carry more than an even share (expert
    // skew), and balancedness across the two backends is a value in (0, 1].
    const even = Math.ceil(TINY.experts * 0.1) / TINY.experts;
    for (const layer of layers) {
      const skew = layer.expert_skew;
      assert.ok(skew.top10_share > even, `layer ${layer.layer}: ${JSON.stringify(skew)}`);
      assert.ok(layer.balancedness > 0 && layer.balancedness <= 1, `${layer.balancedness}`);
    }
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
