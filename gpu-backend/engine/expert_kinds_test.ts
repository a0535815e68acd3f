/**
 * @module SwiGLU and GELU experts, float16 weight storage and a DeepSeek-V3 router through
 * the backend's engine on onnxruntime (the layer path on the main thread, the per-expert
 * path on a Worker), against the reference forward pass (its own math and routing,
 * float64): same experts, outputs within 1e-4, and the two paths within 1e-5.
 */
import assert from "node:assert/strict";
import { loadManifest } from "../server/start_backend.ts";
import { generateModel, type GenerateModelOptions } from "../../tools/model/generate.ts";
import { createGaussian, createRandom } from "../../tools/model/prng.ts";
import { loadReferenceModel } from "../../tools/model/reference.ts";
import { resolveConfig } from "../../shared/config.ts";
import { silentLogger } from "../../shared/logger.ts";
import { createExecutor } from "../execution/create_executor.ts";
import { startupResidency } from "../residency/startup_residency.ts";
import { buildBackendEngine } from "./backend_engine.ts";

const SHAPE: GenerateModelOptions = {
  dModel: 16,
  dFf: 24,
  layers: 2,
  experts: 8,
  topK: 2,
  groups: 4,
  topkGroup: 2,
  sharedExperts: 1,
};

const CASES: { name: string; options: GenerateModelOptions }[] = [
  { name: "SwiGLU + silu", options: { expertKind: "swiglu", activation: "silu" } },
  { name: "SwiGLU + gelu (erf)", options: { expertKind: "swiglu", activation: "gelu" } },
  { name: "MLP + gelu_tanh", options: { expertKind: "mlp", activation: "gelu_tanh" } },
  {
    name: "SwiGLU + gelu, float16 weights, DeepSeek-V3 router",
    options: {
      expertKind: "swiglu",
      activation: "gelu",
      weightDtype: "float16",
      router: {
        scoring: "sigmoid",
        group_score: "sum_top2",
        norm_topk_prob: true,
        routed_scaling_factor: 2.5,
        e_score_correction_bias: [
          [0.1, -0.05, 0, 0.2, -0.1, 0.05, 0, 0.15],
          [0, 0.3, -0.2, 0, 0.1, 0, -0.1, 0.05],
        ],
      },
    },
  },
];

for (const { name, options } of CASES) {
  Deno.test(`engine on onnxruntime equals the reference forward pass: ${name}`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "switchyard-kinds-" });
    const gaussian = createGaussian(createRandom(3));
    const closers: (() => Promise<void>)[] = [];
    try {
      await generateModel(dir, { ...SHAPE, ...options, seed: 5, requestTypes: ["a", "b"] });
      const manifest = await loadManifest(dir);
      const engine = async (execution: "layer" | "expert", workers: number) => {
        const executor = await createExecutor({
          kind: "onnx",
          modelDir: dir,
          manifest,
          workers,
          providers: ["cpu"],
          ...(execution === "layer" ? { parts: [] } : {}),
        });
        closers.push(() => executor.close());
        return (await buildBackendEngine({
          manifest,
          modelDir: dir,
          executor,
          logger: silentLogger,
          backendId: "test",
          startup: await startupResidency({ modelDir: dir, manifest }),
          execution,
          batching: resolveConfig({ env: {} }).batching,
          temperature: 1,
          maxQueuedRows: 1000,
          onUnreachable: "load_local",
          peer: () => undefined,
        })).engine;
      };
      const layer = await engine("layer", 0);
      const perExpert = await engine("expert", 1);
      const reference = await loadReferenceModel(dir);
      for (const rows of [1, 9]) {
        const tokens = Float32Array.from({ length: rows * 16 }, () => 2 * gaussian());
        const expected = reference.forward(tokens, rows);
        const [got, baseline] = await Promise.all([
          layer.infer(tokens, rows),
          perExpert.infer(tokens, rows),
        ]);
        for (const [path, result] of [["layer", got], ["per-expert", baseline]] as const) {
          assert.deepEqual([...result.expertIds], [...expected.expertIds], path);
          let error = 0;
          result.output.forEach((v, i) =>
            error = Math.max(error, Math.abs(v - expected.output[i]!))
          );
          assert(error <= 1e-4, `${path}, ${rows} rows: max abs error ${error}`);
          result.expertWeights.forEach((w, i) =>
            assert(Math.abs(w - expected.expertWeights[i]!) <= 1e-6)
          );
        }
        // Within 1e-5, relative to the value once it exceeds 1 (float32 has ~7 digits:
        // one ulp of 112, this router's largest output, is 7.6e-6).
        got.output.forEach((v, i) => {
          const apart = Math.abs(v - baseline.output[i]!);
          assert(
            apart <= 1e-5 * Math.max(1, Math.abs(v)),
            `${rows} rows: ${v} vs ${baseline.output[i]}`,
          );
        });
      }
    } finally {
      for (const close of closers) await close();
      await Deno.remove(dir, { recursive: true });
    }
  });
}
