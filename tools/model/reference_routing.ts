/**
 * @module The reference forward pass's own routing, written apart from the backend's
 * `gpu-backend/moe/routing.ts` (which it must never import: a test checks the module
 * graph) so that routing bugs show up in end-to-end comparisons.
 *
 * One token at a time, the way the PyTorch reference code reads (DeepSeek-V3
 * `inference/model.py` `Gate.forward`, transformers' `route_tokens_to_experts`):
 *   scores  = softmax(logits) | sigmoid(logits)
 *   choice  = scores + bias
 *   groups  → group score (max | sum of the top 2), keep the `topk_group` best, others −∞
 *   experts = argsort(choice, descending)[:top_k]          (ties → lower index)
 *   weights = scores_T[experts] (/ Σ (+1e-20 for sigmoid) if norm_topk_prob) · scaling
 * where `scores_T` are the scores of `logits / temperature`. Plain arrays and sorts;
 * no attempt at speed.
 */
import type { ModelManifest } from "../../shared/model_manifest.ts";

/** The routing rule of one layer, as the manifest states it. */
export interface ReferenceRouter {
  topK: number;
  groups: number;
  topkGroup: number;
  scoring: "softmax" | "sigmoid";
  groupScore: "max" | "sum_top2";
  normTopkProb: boolean;
  routedScalingFactor: number;
  /** Selection-only bias `[experts]`; absent = zeros. */
  bias?: ArrayLike<number> | undefined;
  /** Temperature of the weights' scores (default 1). */
  temperature?: number;
}

/** The reference router of `layer` of a manifest. */
export function referenceRouterFor(
  manifest: ModelManifest,
  layer: number,
  temperature = 1,
): ReferenceRouter {
  const r = manifest.router;
  return {
    topK: manifest.top_k,
    groups: manifest.groups,
    topkGroup: manifest.topk_group ?? manifest.groups,
    scoring: r.scoring,
    groupScore: r.group_score,
    normTopkProb: r.norm_topk_prob,
    routedScalingFactor: r.routed_scaling_factor,
    bias: r.e_score_correction_bias?.[layer],
    temperature,
  };
}

/** Routes one token's logits; experts best first, with their weights. */
export function referenceRoute(
  logits: ArrayLike<number>,
  router: ReferenceRouter,
): { experts: number[]; weights: number[] } {
  const values = Array.from(logits);
  const count = values.length;
  const scores = scoresOf(values, router.scoring);
  const choice = scores.map((s, e) => s + Number(router.bias?.[e] ?? 0));

  if (router.groups > 1) {
    const size = count / router.groups;
    const groupScores = Array.from({ length: router.groups }, (_, g) => {
      const members = choice.slice(g * size, (g + 1) * size).sort((a, b) => b - a);
      return router.groupScore === "max" ? members[0]! : members[0]! + members[1]!;
    });
    const kept = byDescendingValue(groupScores).slice(0, router.topkGroup);
    for (let e = 0; e < count; e++) {
      if (!kept.includes(Math.floor(e / size))) choice[e] = -Infinity;
    }
  }
  const experts = byDescendingValue(choice).slice(0, router.topK);

  const temperature = router.temperature ?? 1;
  const scoresT = scoresOf(values.map((v) => v / temperature), router.scoring);
  let weights = experts.map((e) => scoresT[e]!);
  if (router.normTopkProb) {
    const sum = weights.reduce((a, b) => a + b, 0) + (router.scoring === "sigmoid" ? 1e-20 : 0);
    weights = weights.map((w) => w / sum);
  }
  return { experts, weights: weights.map((w) => w * router.routedScalingFactor) };
}

function scoresOf(values: number[], scoring: "softmax" | "sigmoid"): number[] {
  if (scoring === "sigmoid") return values.map((v) => 1 / (1 + Math.exp(-v)));
  const top = Math.max(...values);
  const exps = values.map((v) => Math.exp(v - top));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((v) => v / sum);
}

/** Indices sorted by value, largest first; equal values keep the lower index first. */
function byDescendingValue(values: number[]): number[] {
  return values.map((_, i) => i).sort((a, b) => values[b]! - values[a]! || a - b);
}
