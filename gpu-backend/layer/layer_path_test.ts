/**
 * The layer path end to end in process (onnxruntime on this thread): its outputs equal
 * the per-expert path (≤ 1e-5) and an independent float64 oracle (≤ 1e-4) — on the demo
 * model, on a model whose experts are Gemm + bias + GELU (erf) + Gemm, without shared
 * experts, with a routing-only bias, and on executor Workers — with requests running concurrently, so
 * batches coalesce several requests whose rows land on different experts (most experts
 * get no rows in a batch).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../../shared/config.ts";
import { silentLogger } from "../../shared/logger.ts";
import { type ModelManifest, type ModelPart, modelPartPath } from "../../shared/model_manifest.ts";
import { generateModel } from "../../tools/model/generate.ts";
import {
  expertWeightsFrom,
  gateWeightsFrom,
  loadOnnxInitializers,
} from "../../tools/model/onnx_weights.ts";
import { createGaussian, createRandom } from "../../tools/model/prng.ts";
import { expertOutput, gateLogits } from "../../tools/model/reference_math.ts";
import { demoTokens, loadDemoTraffic } from "../../tools/model/traffic.ts";
import { createExecutor } from "../execution/create_executor.ts";
import type { MoeEngine } from "../engine/engine.ts";
import { startupResidency } from "../residency/startup_residency.ts";
import { buildBackendEngine } from "../engine/backend_engine.ts";
import { loadManifest } from "../server/start_backend.ts";
import {
  geluExpertOutput,
  geluGateLogits,
  writeGeluModel,
} from "../../tests/_support/gpu-backend/gelu_model.ts";
import { oracleForward, type OracleParts } from "../../tests/_support/gpu-backend/moe_oracle.ts";

async function engine(dir: string, execution: "layer" | "expert", workers = 0) {
  const manifest = await loadManifest(dir);
  const executor = await createExecutor({
    kind: "onnx",
    modelDir: dir,
    manifest,
    workers,
    providers: ["cpu"],
    ...(execution === "layer" ? { parts: [] } : {}),
  });
  const built = await buildBackendEngine({
    manifest,
    modelDir: dir,
    executor,
    logger: silentLogger,
    backendId: "test",
    startup: await startupResidency({ modelDir: dir, manifest }),
    execution,
    batching: resolveConfig({ env: {} }).batching,
    temperature: 1,
    maxQueuedRows: 1 << 16,
    onUnreachable: "load_local",
    peer: () => undefined,
  });
  return { ...built, close: () => executor.close() };
}

/** Oracle parts of a model in this repository's MLP format (weights from its ONNX files). */
async function mlpParts(dir: string, manifest: ModelManifest): Promise<OracleParts> {
  const load = async (part: ModelPart) =>
    await loadOnnxInitializers(join(dir, modelPartPath(manifest, part)));
  const gates = await Promise.all(
    Array.from(
      { length: manifest.layers },
      async (_, layer) => gateWeightsFrom(await load({ kind: "gate", layer })),
    ),
  );
  const experts = await Promise.all(
    Array.from(
      { length: manifest.layers },
      (_, layer) =>
        Promise.all(
          Array.from({ length: manifest.experts }, async (_, expert) =>
            expertWeightsFrom(await load({ kind: "expert", layer, expert }))),
        ),
    ),
  );
  const shared = await Promise.all(
    Array.from(
      { length: manifest.layers },
      (_, layer) =>
        Promise.all(
          Array.from({ length: manifest.shared_experts }, async (_, expert) =>
            expertWeightsFrom(await load({ kind: "shared", layer, expert }))),
        ),
    ),
  );
  return {
    gate: (layer, row) => gateLogits(gates[layer]!, row, 1),
    expert: (layer, e, row) => expertOutput(experts[layer]![e]!, row, 1, manifest.activation),
    shared: (layer, s, row) => expertOutput(shared[layer]![s]!, row, 1, manifest.activation),
  };
}

/** Runs `requests` concurrently on both paths and checks them against each other and the oracle. */
async function compare(
  dir: string,
  parts: OracleParts,
  requests: { tokens: Float32Array; rows: number }[],
  options: { bias?: number[][]; workers?: number } = {},
): Promise<void> {
  const { bias } = options;
  const manifest = await loadManifest(dir);
  const layer = await engine(dir, "layer", options.workers);
  const expert = await engine(dir, "expert");
  try {
    if (bias) {
      layer.engine.setRoutingBias(bias);
      expert.engine.setRoutingBias(bias);
    }
    const run = (e: MoeEngine) => Promise.all(requests.map((r) => e.infer(r.tokens, r.rows)));
    const [viaLayers, viaExperts] = await Promise.all([run(layer.engine), run(expert.engine)]);
    requests.forEach((r, i) => {
      const oracle = oracleForward(manifest, parts, r.tokens, r.rows, bias ? { bias } : {});
      const got = viaLayers[i]!;
      assert.deepEqual([...got.expertIds], [...oracle.expertIds], `request ${i}: experts`);
      assert.deepEqual([...got.expertIds], [...viaExperts[i]!.expertIds]);
      assertClose(got.expertWeights, oracle.expertWeights, 1e-5, `request ${i}: weights`);
      assertClose(got.output, viaExperts[i]!.output, 1e-5, `request ${i}: layer vs per-expert`);
      assertClose(got.output, oracle.output, 1e-4, `request ${i}: layer vs oracle`);
      assertClose(viaExperts[i]!.output, oracle.output, 1e-4, `request ${i}: per-expert vs oracle`);
    });
    // Rows were batched: fewer layer executions than requests × layers.
    const layerQueue = layer.layers!.batcher.stats().find((q) => q.part === "L0/layer")!;
    assert.ok(layerQueue.executions < requests.length, `${layerQueue.executions} executions`);
    // Per-expert token counts are rows: top_k per token per layer, summed over experts.
    const tokens = requests.reduce((sum, r) => sum + r.rows, 0);
    const routedRows = layer.partStats().filter((p) => /\/E\d+$/.test(p.part))
      .reduce((sum, p) => sum + p.rows, 0);
    assert.equal(routedRows, tokens * manifest.top_k * manifest.layers);
  } finally {
    await layer.close();
    await expert.close();
  }
}

Deno.test("layer path equals the per-expert path and the oracle on the demo model (groups, shared expert)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "switchyard-demo-" });
  try {
    const manifest = await generateModel(dir, {});
    const traffic = (await loadDemoTraffic(dir))!;
    const random = createRandom(4);
    const requests = Array.from({ length: 12 }, (_, i) => {
      const rows = 1 + (i % 6);
      return { rows, tokens: demoTokens(traffic, traffic.request_types[i % 6]!, rows, random) };
    });
    await compare(dir, await mlpParts(dir, manifest), requests);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("layer path equals the per-expert path and the oracle for Gemm + bias + GELU (erf) experts", async () => {
  const dir = await Deno.makeTempDir({ prefix: "switchyard-gelu-" });
  try {
    const d = 16;
    const f = 24;
    const model = await writeGeluModel(dir, {
      dModel: d,
      dFf: f,
      layers: 2,
      experts: 6,
      topK: 2,
      shared: 1,
      seed: 5,
    });
    const parts: OracleParts = {
      gate: (layer, row) => geluGateLogits(model.layers[layer]!.gate, row, d),
      expert: (layer, e, row) => geluExpertOutput(model.layers[layer]!.experts[e]!, row, d, f),
      shared: (layer, s, row) => geluExpertOutput(model.layers[layer]!.shared[s]!, row, d, f),
    };
    const gaussian = createGaussian(createRandom(8));
    const requests = Array.from({ length: 10 }, (_, i) => {
      const rows = 1 + (i % 4);
      return { rows, tokens: Float32Array.from({ length: rows * d }, gaussian) };
    });
    await compare(dir, parts, requests);
    // The same on two executor Workers (feeds and outputs cross threads).
    await compare(dir, parts, requests, { workers: 2 });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("layer path equals the per-expert path and the oracle without shared experts and with a routing bias", async () => {
  const dir = await Deno.makeTempDir({ prefix: "switchyard-bias-" });
  try {
    const manifest = await generateModel(dir, {
      dModel: 16,
      dFf: 24,
      layers: 3,
      experts: 8,
      topK: 2,
      groups: 4,
      topkGroup: 2,
      sharedExperts: 0,
    });
    const traffic = (await loadDemoTraffic(dir))!;
    const random = createRandom(6);
    const requests = Array.from({ length: 9 }, (_, i) => {
      const rows = 1 + (i % 5);
      return { rows, tokens: demoTokens(traffic, traffic.request_types[i % 3]!, rows, random) };
    });
    const parts = await mlpParts(dir, manifest);
    await compare(dir, parts, requests);
    // A bias large enough to change selections: favour the experts of the last group.
    const bias = Array.from(
      { length: manifest.layers },
      () => Array.from({ length: manifest.experts }, (_, e) => (e >= 6 ? 1.5 : 0)),
    );
    const changed = requests.some((r) =>
      oracleForward(manifest, parts, r.tokens, r.rows, { bias }).expertIds.join() !==
        oracleForward(manifest, parts, r.tokens, r.rows).expertIds.join()
    );
    assert.ok(changed, "the bias changes some selections");
    await compare(dir, parts, requests, { bias });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

function assertClose(
  got: Float32Array,
  expected: Float32Array,
  tolerance: number,
  what: string,
): void {
  assert.equal(got.length, expected.length, what);
  let worst = 0;
  for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i]! - expected[i]!));
  assert.ok(worst <= tolerance, `${what}: max diff ${worst} > ${tolerance}`);
}
