/**
 * A backend on the simulated executor says so: in readiness details and on every
 * inference answer (it is for pool-scale benchmarks; its outputs are not the model's) —
 * on the per-expert path and on the layer path, where simulated backends run the
 * production layer path (real gates, simulated layer executions, the peer channel) and
 * a request crossing backends names its hops in `Server-Timing`.
 */
import assert from "node:assert/strict";
import type { PlacementPlan } from "../shared/placement_plan.ts";
import { parseServerTiming } from "../shared/server_timing.ts";
import { createRandom } from "../tools/model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { freePort, startPool, startProcess } from "../tools/pool/processes.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

for (const execution of ["layer", "expert"] as const) {
  Deno.test(`a simulated backend (${execution} path) flags its answers and its readiness`, async () => {
    const modelDir = await makeTinyModel();
    const port = freePort();
    const backend = await startProcess("gpu-backend/main.ts", {
      url: `http://127.0.0.1:${port}`,
      env: {
        SWITCHYARD_MODEL__DIR: modelDir,
        SWITCHYARD_BACKEND__PORT: String(port),
        SWITCHYARD_BACKEND__EXECUTOR: "simulated",
        SWITCHYARD_BACKEND__EXECUTION: execution,
        SWITCHYARD_LOG__LEVEL: "error",
      },
    });
    try {
      const ready = await (await fetch(`${backend.url}/v2/health/ready`)).json();
      assert.equal(ready.details.execution_provider, "simulated");
      assert.equal(ready.details.execution, execution);
      const call = await infer(
        backend.url,
        TINY.name,
        new Float32Array(3 * TINY.dModel).fill(1),
        TINY.dModel,
      );
      assert.equal(call.status, 200);
      assert.equal(call.decoded!.head.parameters?.["simulated"], true);
      assert.deepEqual(call.decoded!.tensors.get("output")!.shape, [3, TINY.dModel]);
    } finally {
      await backend.kill();
      await Deno.remove(modelDir, { recursive: true });
    }
  });
}

Deno.test("two simulated backends under a spread plan answer 200 and Server-Timing names the hops", async () => {
  const modelDir = await makeTinyModel();
  const traffic = (await loadDemoTraffic(modelDir))!;
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: {
      SWITCHYARD_EXPERT_BALANCER__STRATEGY: "off",
      SWITCHYARD_BACKEND__EXECUTOR: "simulated",
      SWITCHYARD_BACKEND__SIMULATED__FIXED_MS: "0.2",
      SWITCHYARD_BACKEND__SIMULATED__PER_ROW_MS: "0.01",
    },
  });
  const call = async (backend: number, path: string, method: string, body?: unknown) => {
    const response = await fetch(`${pool.backends[backend]!.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${pool.token}`, "content-type": "application/json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const json = await response.json();
    assert.equal(response.status, 200, JSON.stringify(json));
    return json;
  };
  try {
    // Backend-1 hosts experts 0–3 of every layer, backend-2 experts 4–7: no replicas.
    const plan: PlacementPlan = {
      model: TINY.name,
      version: 1,
      createdAt: Date.now(),
      reason: "test",
      backends: pool.backends.map((b, i) => ({ id: `backend-${i + 1}`, url: b.url })),
      slotsPerBackend: 4,
      layers: Array.from({ length: TINY.layers }, () => ({ phy2log: [0, 1, 2, 3, 4, 5, 6, 7] })),
    };
    for (
      const [path, body] of [
        ["/v2/plan", plan],
        ["/v2/plan/activate", { version: 1 }],
        ["/v2/plan/release", { version: 1 }],
      ] as const
    ) {
      await Promise.all(
        pool.backends.map((_, i) => call(i, path, path === "/v2/plan" ? "PUT" : "POST", body)),
      );
    }
    const ready = await call(0, "/v2/health/ready", "GET");
    assert.equal(ready.details.execution, "layer");
    assert.deepEqual(ready.details.layers.map((l: { experts: number }) => l.experts), [4, 4]);

    // Requests straight to backend-1: rows whose experts live on backend-2 cross.
    const random = createRandom(3);
    const headers = { authorization: `Bearer ${pool.token}` };
    const hops: string[] = [];
    for (const type of ["chat", "code", "math", "chat", "code", "math"]) {
      const tokens = demoTokens(traffic, type, 4, random);
      const res = await infer(pool.backends[0]!.url, TINY.name, tokens, TINY.dModel, { headers });
      assert.equal(res.status, 200, JSON.stringify(res.error));
      assert.equal(res.decoded!.head.parameters?.["simulated"], true);
      assert.deepEqual(res.decoded!.tensors.get("output")!.shape, [4, TINY.dModel]);
      const timing = parseServerTiming(res.headers.get("server-timing"));
      const hop = timing.find((m) => m.name === "hop");
      assert.ok(hop, `Server-Timing names the hop: ${res.headers.get("server-timing")}`);
      hops.push(hop.desc ?? "");
    }
    const crossed = hops.filter((desc) => /^\d+ layer\(s\)/.test(desc));
    assert.ok(crossed.length > 0, `some request crossed backends: ${hops.join(" | ")}`);
    const peers = await call(0, "/v2/plan", "GET");
    const sent = Object.values(peers.peers) as { frames: number }[];
    assert.ok(sent.reduce((sum, s) => sum + s.frames, 0) > 0, "rows crossed the peer channel");
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
