/**
 * End to end over real processes: a router and two backends on loopback, the tiny
 * model, inference in JSON and binary compared with the reference forward pass.
 */
import assert from "node:assert/strict";
import { createRandom } from "../tools/model/prng.ts";
import { loadReferenceModel } from "../tools/model/reference.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { infer, maxAbsDiff, waitHealthyBackends } from "./_support/client.ts";
import { startPool } from "../tools/pool/processes.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

Deno.test("router + 2 backends serve the model exactly like the reference", async (t) => {
  const modelDir = await makeTinyModel();
  const reference = await loadReferenceModel(modelDir);
  const traffic = (await loadDemoTraffic(modelDir))!;
  const pool = await startPool({ modelDir, backends: 2 });
  const random = createRandom(11);
  try {
    for (const binary of [false, true]) {
      await t.step(`${binary ? "binary" : "JSON"} tensors through the router`, async () => {
        for (const rows of [1, 7, 33]) {
          const tokens = demoTokens(traffic, "code", rows, random);
          const call = await infer(pool.router.url, TINY.name, tokens, TINY.dModel, {
            binaryInput: binary,
            binaryOutputs: binary,
            outputs: ["output", "expert_ids", "expert_weights"],
            requestType: "code",
          });
          assert.equal(call.status, 200, JSON.stringify(call.error));
          const expected = reference.forward(tokens, rows);
          const output = call.decoded!.tensors.get("output")!;
          assert.deepEqual(output.shape, [rows, TINY.dModel]);
          assert.ok(maxAbsDiff(output.data, expected.output) <= 1e-4);
          const ids = call.decoded!.tensors.get("expert_ids")!;
          assert.deepEqual(ids.shape, [TINY.layers, rows, TINY.topK]);
          assert.deepEqual([...ids.data], [...expected.expertIds]);
          const weights = call.decoded!.tensors.get("expert_weights")!;
          assert.ok(maxAbsDiff(weights.data, expected.expertWeights) <= 1e-5);
          assert.equal(call.decoded!.head.parameters?.["request_type"], "code");
        }
      });
    }

    await t.step("the x-request-type header labels the request", async () => {
      const tokens = demoTokens(traffic, "math", 2, random);
      const call = await infer(pool.router.url, TINY.name, tokens, TINY.dModel, {
        headers: { "x-request-type": "math" },
      });
      assert.equal(call.status, 200);
      assert.equal(call.decoded!.head.parameters?.["request_type"], "math");
    });

    await t.step("requests spread over both backends", async () => {
      // Both must be in rotation first: on a busy machine a health round can lag.
      await waitHealthyBackends(pool.router.url, 2);
      const seen = new Set<string>();
      const calls = Array.from(
        { length: 24 },
        () =>
          infer(pool.router.url, TINY.name, demoTokens(traffic, "chat", 4, random), TINY.dModel),
      );
      for (const call of await Promise.all(calls)) {
        assert.equal(call.status, 200);
        seen.add(call.headers.get("x-switchyard-backend")!);
      }
      assert.deepEqual([...seen].sort(), ["backend-1", "backend-2"]);
    });

    await t.step(
      "an OIP client's versioned calls succeed on the router and on a backend",
      async () => {
        const backend = pool.backends[0]!.url;
        const auth = { authorization: `Bearer ${pool.token}` };
        for (const [base, headers] of [[pool.router.url, {}], [backend, auth]] as const) {
          const server = await (await fetch(`${base}/v2`, { headers })).json();
          assert.deepEqual(server.extensions, ["binary_tensor_data"]);
          const metadata = await fetch(`${base}/v2/models/${TINY.name}/versions/1`, { headers });
          assert.equal(metadata.status, 200);
          assert.deepEqual((await metadata.json()).versions, ["1"]);
          const ready = await fetch(`${base}/v2/models/${TINY.name}/versions/1/ready`, { headers });
          assert.deepEqual(await ready.json(), { name: TINY.name, ready: true });
          const wrong = await fetch(`${base}/v2/models/${TINY.name}/versions/9`, { headers });
          assert.equal(wrong.status, 404);
          assert.match((await wrong.json()).error, /version "9"/);
          const tokens = demoTokens(traffic, "chat", 3, random);
          const versioned = await fetch(`${base}/v2/models/${TINY.name}/versions/1/infer`, {
            method: "POST",
            headers: { ...headers, "content-type": "application/json" },
            body: JSON.stringify({
              inputs: [{
                name: "input",
                shape: [3, TINY.dModel],
                datatype: "FP32",
                data: [...tokens],
              }],
            }),
          });
          assert.equal(versioned.status, 200);
          const body = await versioned.json();
          assert.equal(body.model_version, "1");
          const expected = reference.forward(tokens, 3).output;
          assert.ok(maxAbsDiff(body.outputs[0].data, expected) <= 1e-4);
        }
      },
    );

    await t.step("backends refuse callers without the internal token", async () => {
      const direct = pool.backends[0]!.url;
      const response = await fetch(`${direct}/v2/models/${TINY.name}`);
      assert.equal(response.status, 401);
      assert.match((await response.json()).error, /internal token/);
      const live = await fetch(`${direct}/v2/health/live`);
      assert.equal(live.status, 200);
      await live.body?.cancel();
      // Readiness is open for probes, but its details need the token.
      const ready = await fetch(`${direct}/v2/health/ready`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { ready: true });
    });
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
