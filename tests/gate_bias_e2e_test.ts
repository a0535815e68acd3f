/**
 * The routing-only gate bias on a real backend (onnxruntime, the tiny model, in process
 * over loopback HTTP), driven through the router's own client
 * (`router/operate/advisor/bias_client.ts`): no bias leaves outputs as the reference; after
 * skewed demo traffic the evaluation balances every layer at a finite output deviation;
 * a bias set with `PUT /v2/gate/bias` changes some tokens' experts (outputs stay finite)
 * and shows in readiness; clearing it restores the outputs; all of it needs the
 * internal token.
 */
import assert from "node:assert/strict";
import { resolveConfig } from "../shared/config.ts";
import { silentLogger } from "../shared/logger.ts";
import { startBackend } from "../gpu-backend/server/start_backend.ts";
import { evaluateBias, setBias } from "../router/operate/advisor/bias_client.ts";
import { createRandom } from "../tools/model/prng.ts";
import { loadReferenceModel } from "../tools/model/reference.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { infer, maxAbsDiff } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

const TOKEN = "gate-bias-test-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };

Deno.test("a backend evaluates, sets and clears a routing-only gate bias", async (t) => {
  const modelDir = await makeTinyModel();
  const config = resolveConfig({
    env: {
      SWITCHYARD_MODEL__DIR: modelDir,
      SWITCHYARD_BACKEND__PORT: "0",
      SWITCHYARD_BACKEND__EXECUTORS: "1",
      SWITCHYARD_BACKEND__EXECUTION_PROVIDERS: '["cpu"]',
      SWITCHYARD_AUTH__INTERNAL_TOKEN: TOKEN,
    },
  });
  const backend = await startBackend(config, silentLogger);
  const target = { name: "b0", url: backend.url };
  const client = { fetch, internalToken: TOKEN };
  const reference = await loadReferenceModel(modelDir);
  const traffic = (await loadDemoTraffic(modelDir))!;
  const random = createRandom(21);
  // Skewed traffic: mostly "chat", some "code".
  const requests = ["chat", "chat", "code", "chat", "chat", "chat", "code", "chat"].map(
    (type, i) => ({ rows: 3 + (i % 3), tokens: demoTokens(traffic, type, 3 + (i % 3), random) }),
  );
  const run = async (tokens: Float32Array) => {
    const res = await infer(backend.url, TINY.name, tokens, TINY.dModel, {
      headers: AUTH,
      outputs: ["output", "expert_ids"],
      binaryOutputs: true,
    });
    assert.equal(res.status, 200, JSON.stringify(res.error));
    return {
      output: res.decoded!.tensors.get("output")!.data as Float32Array,
      expertIds: res.decoded!.tensors.get("expert_ids")!.data as Int32Array,
    };
  };
  const ready = async () => {
    const response = await fetch(`${backend.url}/v2/health/ready`, { headers: AUTH });
    return (await response.json()).details.routing_bias;
  };
  try {
    await t.step("the bias endpoints need the internal token", async () => {
      for (
        const [method, path, body] of [
          ["POST", "/v2/advice/gate-bias", {}],
          ["PUT", "/v2/gate/bias", { bias: null }],
        ] as const
      ) {
        const response = await fetch(`${backend.url}${path}`, {
          method,
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        assert.equal(response.status, 401, path);
        await response.body?.cancel();
      }
      const noToken = await evaluateBias(target, { fetch, internalToken: undefined });
      assert.ok("error" in noToken && /HTTP 401/.test(noToken.error));
    });

    await t.step("an evaluation before any request answers 409", async () => {
      const result = await evaluateBias(target, client);
      assert.ok("error" in result);
      assert.match(result.error, /HTTP 409: .*no inputs recorded yet/);
    });

    const unbiased: { output: Float32Array; expertIds: Int32Array }[] = [];
    await t.step("without a bias, outputs are the reference model's", async () => {
      assert.deepEqual(await ready(), { active: false, max_abs: [] });
      for (const { tokens, rows } of requests) {
        const got = await run(tokens);
        const expected = reference.forward(tokens, rows);
        assert.ok(maxAbsDiff(got.output, expected.output) <= 1e-4);
        assert.deepEqual([...got.expertIds], [...expected.expertIds]);
        unbiased.push(got);
      }
    });

    let fitted: number[][] = [];
    await t.step("the evaluation balances every layer at a finite output deviation", async () => {
      const result = await evaluateBias(target, client);
      assert.ok(!("error" in result), JSON.stringify(result));
      const rows = requests.reduce((sum, r) => sum + r.rows, 0);
      assert.equal(result.rows, rows);
      assert.equal(result.layers.length, TINY.layers);
      for (const layer of result.layers) {
        assert.ok(
          layer.balancednessAfter >= layer.balancednessBefore,
          `layer ${layer.layer}: ${layer.balancednessBefore} → ${layer.balancednessAfter}`,
        );
        assert.equal(layer.bias.length, TINY.experts);
      }
      assert.ok(result.layers[0]!.balancednessAfter > result.layers[0]!.balancednessBefore);
      assert.ok(Number.isFinite(result.outputRelativeL2) && result.outputRelativeL2 > 0);
      assert.ok(Number.isFinite(result.outputMaxAbs));
      assert.ok(result.selectionChanged > 0 && result.selectionChanged <= 1);
      fitted = result.layers.map((layer) => layer.bias);
      // Evaluations are not client requests.
      assert.equal(backend.engine.stats().requests, requests.length);
    });

    await t.step(
      "PUT /v2/gate/bias validates, then changes which experts some rows use",
      async () => {
        const bad = await fetch(`${backend.url}/v2/gate/bias`, {
          method: "PUT",
          headers: { ...AUTH, "content-type": "application/json" },
          body: JSON.stringify({ bias: [new Array(TINY.experts).fill(0), [1, 2]] }),
        });
        assert.equal(bad.status, 400);
        assert.match((await bad.json()).error, /bias\[1\] has 2 experts, the model has 8/);
        assert.deepEqual(await setBias([target], fitted, client), [{ backend: "b0", ok: true }]);
        const summary = await ready();
        assert.equal(summary.active, true);
        assert.equal(summary.max_abs.length, TINY.layers);
        assert.ok(summary.max_abs.every((m: number) => m > 0));
        let changedRows = 0;
        for (const [i, { tokens }] of requests.entries()) {
          const got = await run(tokens);
          assert.ok(got.output.every(Number.isFinite));
          if (got.expertIds.some((id, j) => id !== unbiased[i]!.expertIds[j])) changedRows++;
        }
        assert.ok(changedRows > 0, "some rows route differently under the bias");
      },
    );

    await t.step("clearing the bias restores the unbiased outputs", async () => {
      assert.deepEqual(await setBias([target], null, client), [{ backend: "b0", ok: true }]);
      assert.deepEqual(await ready(), { active: false, max_abs: [] });
      for (const [i, { tokens }] of requests.entries()) {
        const got = await run(tokens);
        assert.deepEqual(got.output, unbiased[i]!.output);
        assert.deepEqual(got.expertIds, unbiased[i]!.expertIds);
      }
    });
  } finally {
    await backend.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
