/** @module Tests of reading each family's config.json into an import plan. */
import assert from "node:assert/strict";
import { FAMILIES, planFamily } from "./families.ts";
import { syntheticCheckpoint } from "./synthetic_checkpoint.ts";

Deno.test("planFamily() gives each family its MoE layers and router block", () => {
  const expected: Record<
    string,
    { layers: number[]; router: Record<string, unknown>; shared: number }
  > = {
    mixtral: { layers: [0, 1], router: { scoring: "softmax", norm_topk_prob: true }, shared: 0 },
    qwen2_moe: {
      layers: [1, 2],
      router: { scoring: "softmax", norm_topk_prob: false },
      shared: 20,
    },
    qwen3_moe: { layers: [1, 3], router: { scoring: "softmax", norm_topk_prob: true }, shared: 0 },
    olmoe: { layers: [0, 1], router: { scoring: "softmax", norm_topk_prob: false }, shared: 0 },
    deepseek_v2: {
      layers: [1, 2],
      router: {
        scoring: "softmax",
        group_score: "max",
        norm_topk_prob: false,
        routed_scaling_factor: 4,
      },
      shared: 24,
    },
    deepseek_v3: {
      layers: [1, 2],
      router: {
        scoring: "sigmoid",
        group_score: "sum_top2",
        norm_topk_prob: true,
        routed_scaling_factor: 2.5,
      },
      shared: 12,
    },
  };
  for (const family of FAMILIES) {
    const plan = planFamily(syntheticCheckpoint(family).config);
    const want = expected[family]!;
    assert.deepEqual(plan.moeLayers, want.layers, family);
    assert.deepEqual({ ...plan.router, ...want.router }, plan.router, family);
    assert.equal(plan.sharedFf, want.shared, family);
    assert.equal(plan.correctionBias, family === "deepseek_v3");
    assert.equal(plan.groups, family.startsWith("deepseek") ? 4 : 1);
  }
  assert.equal(
    planFamily(syntheticCheckpoint("mixtral").config).names.expert(3, 5).up,
    "model.layers.3.block_sparse_moe.experts.5.w3.weight",
  );
});

Deno.test("planFamily() follows DeepSeek-V2's own code for norm_topk_prob and greedy routing", () => {
  const config = syntheticCheckpoint("deepseek_v2").config;
  const renormalised = planFamily({ ...config, norm_topk_prob: true });
  assert.equal(renormalised.router.norm_topk_prob, true);
  assert.equal(renormalised.router.routed_scaling_factor, 1);
  const greedy = planFamily({ ...config, topk_method: "greedy" });
  assert.equal(greedy.groups, 1);
});

Deno.test("planFamily() names the config field that is missing or wrong", () => {
  const config = syntheticCheckpoint("deepseek_v3").config;
  assert.throws(
    () => planFamily({ ...config, model_type: "llama" }),
    /model_type "llama" is not one of mixtral/,
  );
  assert.throws(
    () => planFamily({ ...config, hidden_size: undefined }),
    /config.json hidden_size must be an integer/,
  );
  assert.throws(
    () => planFamily({ ...config, hidden_act: "swiglu" }),
    /hidden_act "swiglu" is not one of/,
  );
  assert.throws(
    () => planFamily({ ...config, scoring_func: "softmax" }),
    /noaux_tc with scoring_func sigmoid/,
  );
  assert.throws(
    () => planFamily({ ...config, rms_norm_eps: -1 }),
    /rms_norm_eps must be a number > 0/,
  );
});
