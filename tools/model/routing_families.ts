/**
 * @module The routing families Switchyard reproduces, as router settings of the manifest
 * (what `deno task import` writes for each), for the property tests and the agreement
 * report. `groups`/`bias` say whether the family uses the group limit and the
 * selection-only correction bias; `scale` whether it scales the weights.
 */
import type { RouterSettings } from "../../shared/model_manifest.ts";

/** One family's routing rule. */
export interface RoutingFamily {
  /** Hugging Face `model_type`, or the `topk_method` variant. */
  name: string;
  /** The rule in one line. */
  rule: string;
  router: Omit<RouterSettings, "e_score_correction_bias" | "routed_scaling_factor">;
  groups: boolean;
  bias: boolean;
  scale: boolean;
}

/** Every family, in the order of the docs' table. */
export const ROUTING_FAMILIES: readonly RoutingFamily[] = [
  {
    name: "mixtral",
    rule: "softmax → top-k → renormalise",
    router: { scoring: "softmax", group_score: "max", norm_topk_prob: true },
    groups: false,
    bias: false,
    scale: false,
  },
  {
    name: "qwen2_moe",
    rule: "softmax → top-k, not renormalised (norm_topk_prob false)",
    router: { scoring: "softmax", group_score: "max", norm_topk_prob: false },
    groups: false,
    bias: false,
    scale: false,
  },
  {
    name: "qwen3_moe",
    rule: "softmax → top-k → renormalise (norm_topk_prob true)",
    router: { scoring: "softmax", group_score: "max", norm_topk_prob: true },
    groups: false,
    bias: false,
    scale: false,
  },
  {
    name: "olmoe",
    rule: "softmax → top-k, not renormalised (norm_topk_prob false)",
    router: { scoring: "softmax", group_score: "max", norm_topk_prob: false },
    groups: false,
    bias: false,
    scale: false,
  },
  {
    name: "deepseek_v2 (greedy)",
    rule: "softmax → top-k → × routed_scaling_factor",
    router: { scoring: "softmax", group_score: "max", norm_topk_prob: false },
    groups: false,
    bias: false,
    scale: true,
  },
  {
    name: "deepseek_v2 (group_limited_greedy)",
    rule: "softmax → best topk_group groups by max → top-k → × routed_scaling_factor",
    router: { scoring: "softmax", group_score: "max", norm_topk_prob: false },
    groups: true,
    bias: false,
    scale: true,
  },
  {
    name: "deepseek_v3 (noaux_tc)",
    rule:
      "sigmoid; select on s + e_score_correction_bias; groups by top-2 sum → top-k; unbiased s / Σ × routed_scaling_factor",
    router: { scoring: "sigmoid", group_score: "sum_top2", norm_topk_prob: true },
    groups: true,
    bias: true,
    scale: true,
  },
];
