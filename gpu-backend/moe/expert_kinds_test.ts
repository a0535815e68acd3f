/**
 * @module SwiGLU and GELU experts, float16 weight storage and a DeepSeek-V3 router through
 * the backend's engine on onnxruntime Workers, against the reference forward pass (its
 * own math and routing, float64): same experts, outputs within 1e-4.
 */
import assert from "node:assert/strict";
import { loadManifest } from "../server/start_backend.ts";
import { generateModel, type GenerateModelOptions } from "../../tools/model/generate.ts";
import { createGaussian, createRandom } from "../../tools/model/prng.ts";
import { loadReferenceModel } from "../../tools/model/reference.ts";
import { MicroBatcher } from "../batching/micro_batcher.ts";
import { adaptivePolicy } from "../batching/policies.ts";
import { OrtExecutorPool } from "../execution/ort_executor_pool.ts";
import { MoeEngine } from "./engine.ts";

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
    const pool = { close: () => Promise.resolve() };
    try {
      await generateModel(dir, { ...SHAPE, ...options, seed: 5, requestTypes: ["a", "b"] });
      const manifest = await loadManifest(dir);
      const executor = await OrtExecutorPool.create({
        modelDir: dir,
        manifest,
        workers: 1,
        providers: ["cpu"],
      });
      pool.close = () => executor.close();
      const engine = new MoeEngine({
        manifest,
        runner: new MicroBatcher({
          executor,
          policy: adaptivePolicy({ min: 2, max: 16, maxWaitMs: 2, latencyBudgetMs: 50 }),
        }),
        temperature: 1,
        maxQueuedRows: 1000,
      });
      const reference = await loadReferenceModel(dir);
      for (const rows of [1, 9]) {
        const tokens = Float32Array.from({ length: rows * 16 }, () => 2 * gaussian());
        const got = await engine.infer(tokens, rows);
        const expected = reference.forward(tokens, rows);
        assert.deepEqual([...got.expertIds], [...expected.expertIds]);
        let error = 0;
        got.output.forEach((v, i) => error = Math.max(error, Math.abs(v - expected.output[i]!)));
        assert(error <= 1e-4, `${rows} rows: max abs error ${error}`);
        got.expertWeights.forEach((w, i) =>
          assert(Math.abs(w - expected.expertWeights[i]!) <= 1e-6)
        );
      }
    } finally {
      await pool.close();
      await Deno.remove(dir, { recursive: true });
    }
  });
}
