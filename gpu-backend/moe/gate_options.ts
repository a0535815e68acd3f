/**
 * @module The gate's options (routing family, top-k, group limit, temperature, bias) and
 * the validation of `routeTokens()` arguments: what is wrong, as one sentence part.
 */

/** Knobs of the gate: the routing family, how many experts, the group limit, temperature. */
export interface GateOptions {
  /** Experts selected per token. */
  topK: number;
  /** Contiguous expert groups; 1 disables the group limit. */
  groups: number;
  /** Groups kept per token before the top-k (`<= groups`). */
  topkGroup: number;
  /** Temperature (`> 0`) of the weights' scores; the choice never depends on it. */
  temperature: number;
  /**
   * Selection-only per-expert bias added to the scores (DeepSeek-V3's
   * `e_score_correction_bias`, the advisor's routing-only bias): it changes which experts
   * are chosen, never their weights. Absent or all zero = no change.
   */
  bias?: Float32Array | undefined;
  /** `softmax` over all experts (default) or `sigmoid` per expert. */
  scoring?: "softmax" | "sigmoid";
  /** Group score of the group limit: best score (`max`, default) or best two summed. */
  groupScore?: "max" | "sum_top2";
  /** Renormalise the chosen experts' scores to sum to 1 (default true). */
  normalize?: boolean;
  /** Factor on the weights (`routed_scaling_factor`, default 1). */
  scale?: number;
}

/** Why the arguments of `routeTokens` are invalid, or `undefined` when they are fine. */
export function describeBadRouteArgs(
  logits: Float32Array,
  rows: number,
  experts: number,
  options: GateOptions,
): string | undefined {
  const { topK, groups, topkGroup, temperature, bias } = options;
  if (!Number.isInteger(rows) || rows < 0) return `rows must be an integer >= 0, got ${rows}`;
  if (!Number.isInteger(experts) || experts < 1) {
    return `experts must be an integer >= 1, got ${experts}`;
  }
  if (logits.length !== rows * experts) {
    return `logits length ${logits.length} is not rows * experts = ${rows * experts}`;
  }
  if (bias !== undefined && bias.length !== experts) {
    return `bias length ${bias.length} is not experts = ${experts}`;
  }
  if (bias !== undefined && !bias.every(Number.isFinite)) return "bias values must be finite";
  if (!Number.isInteger(topK) || topK < 1) return `topK must be an integer >= 1, got ${topK}`;
  if (topK > experts) return `topK ${topK} exceeds experts ${experts}`;
  if (!Number.isInteger(groups) || groups < 1) {
    return `groups must be an integer >= 1, got ${groups}`;
  }
  if (experts % groups !== 0) return `experts ${experts} is not divisible by groups ${groups}`;
  if (!Number.isInteger(topkGroup) || topkGroup < 1 || topkGroup > groups) {
    return `topkGroup must be an integer in [1, groups = ${groups}], got ${topkGroup}`;
  }
  const keptExperts = topkGroup * (experts / groups);
  if (keptExperts < topK) {
    return `topkGroup ${topkGroup} keeps ${keptExperts} experts, fewer than topK ${topK}`;
  }
  if (groups > 1 && options.groupScore === "sum_top2" && experts / groups < 2) {
    return `groupScore sum_top2 needs at least 2 experts per group, got ${experts / groups}`;
  }
  if (!(temperature > 0)) return `temperature must be > 0, got ${temperature}`;
  const scale = options.scale ?? 1;
  if (!(scale > 0) || !Number.isFinite(scale)) return `scale must be finite and > 0, got ${scale}`;
  const bad = logits.findIndex((value) => !Number.isFinite(value));
  if (bad >= 0) {
    return `logit of row ${Math.floor(bad / experts)}, expert ${bad % experts} is ${logits[bad]}`;
  }
  return undefined;
}
