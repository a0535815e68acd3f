/**
 * @module Gated top-k routing of tokens to experts (pure math, no I/O).
 *
 * Design. For each token (row) the gate gives one logit per expert; the score of an
 * expert is `logit / temperature`.
 *
 * Step 1 (group limit, only when `groups > 1`, DeepSeek-V3 style): the experts are
 * split into `groups` contiguous groups of `experts / groups`; a group's score is the
 * best score inside it. The `topkGroup` best groups are kept (ties → lower group index)
 * and every expert of the other groups is masked out. An expert with the globally best
 * score is therefore not chosen when its group is dropped.
 *
 * Step 2 (top-k): the `topK` best eligible experts by score, in descending order,
 * ties → lower expert index.
 *
 * Step 3 (weights): softmax over the selected `topK` scores, which equals the full
 * softmax renormalised over the selection. Computed in float64 after subtracting the
 * best selected score, then stored as float32.
 *
 * Invariant: because the choice is a deterministic top-k and `temperature > 0` keeps the
 * order of the scores, temperature changes only the weights, never the choice. We select
 * on the raw logits so this also holds bit for bit under floating-point rounding: low
 * temperatures sharpen the weights towards the best expert, high ones flatten them
 * towards `1 / topK` (`Infinity` gives exactly uniform weights).
 */
import type { ModelManifest } from "../../shared/model_manifest.ts";

/** Knobs of the gate: how many experts per token, the group limit and the temperature. */
export interface GateOptions {
  /** Experts selected per token. */
  topK: number;
  /** Contiguous expert groups; 1 disables the group limit. */
  groups: number;
  /** Groups kept per token before the top-k (`<= groups`). */
  topkGroup: number;
  /** Softmax temperature (`> 0`); only the weights depend on it. */
  temperature: number;
  /**
   * Routing-only per-expert bias (DeepSeek-V3's auxiliary-loss-free balancing): added to
   * the logits for group and top-k selection only; the combine weights still come from
   * the unbiased logits of the chosen experts. Absent or all zero = no change.
   */
  bias?: Float32Array | undefined;
}

/** Per-token routing: both arrays are `[rows * topK]`, row-major, best expert first. */
export interface TokenRouting {
  experts: Int32Array;
  weights: Float32Array;
}

/** The rows that selected one expert, and where each selection lives in the routing. */
export interface ExpertAssignment {
  /** Token rows, ascending; distinct because a token selects an expert at most once. */
  rows: Int32Array;
  /** Flat positions `row * topK + k` into `TokenRouting.experts` / `.weights`. */
  positions: Int32Array;
}

/** Gate options of a model manifest, with an optional temperature (default 1). */
export function gateOptionsFor(manifest: ModelManifest, temperature = 1): GateOptions {
  return {
    topK: manifest.top_k,
    groups: manifest.groups,
    topkGroup: manifest.topk_group ?? manifest.groups,
    temperature,
  };
}

/** Routes `rows` tokens given their gate logits `[rows, experts]`. */
export function routeTokens(
  logits: Float32Array,
  rows: number,
  experts: number,
  options: GateOptions,
): TokenRouting {
  const problem = describeBadRouteArgs(logits, rows, experts, options);
  if (problem !== undefined) throw new RangeError(`Cannot route tokens: ${problem}`);
  const { topK, groups, topkGroup, temperature, bias } = options;
  const groupSize = experts / groups;
  const routing: TokenRouting = {
    experts: new Int32Array(rows * topK),
    weights: new Float32Array(rows * topK),
  };
  const eligible = new Uint8Array(experts);
  const taken = new Uint8Array(groups);
  const groupScores = new Float64Array(groups);
  const selectedLogits = new Float64Array(topK);
  const selectedWeights = new Float64Array(topK);

  for (let row = 0; row < rows; row++) {
    const base = row * experts;
    // Step 1: group limit.
    if (groups > 1) {
      for (let g = 0; g < groups; g++) {
        let best = -Infinity;
        for (let e = g * groupSize; e < (g + 1) * groupSize; e++) {
          best = Math.max(best, logits[base + e]! + (bias?.[e] ?? 0));
        }
        groupScores[g] = best;
      }
      eligible.fill(0);
      taken.fill(0);
      for (let pick = 0; pick < topkGroup; pick++) {
        const g = argmaxUnmarked(groupScores, taken, 0, groups);
        taken[g] = 1;
        eligible.fill(1, g * groupSize, (g + 1) * groupSize);
      }
    } else {
      eligible.fill(1);
    }
    // Step 2: top-k over the eligible experts (strict `>` scanning upwards → lower index wins ties).
    for (let k = 0; k < topK; k++) {
      let bestExpert = -1;
      let bestScore = -Infinity;
      for (let e = 0; e < experts; e++) {
        const value = logits[base + e]! + (bias?.[e] ?? 0);
        if (eligible[e] === 1 && (bestExpert < 0 || value > bestScore)) {
          bestExpert = e;
          bestScore = value;
        }
      }
      eligible[bestExpert] = 0;
      routing.experts[row * topK + k] = bestExpert;
      selectedLogits[k] = logits[base + bestExpert]!;
    }
    // Step 3: stable softmax over the selection's unbiased logits.
    let top = -Infinity;
    for (let k = 0; k < topK; k++) top = Math.max(top, selectedLogits[k]!);
    let total = 0;
    for (let k = 0; k < topK; k++) {
      selectedWeights[k] = Math.exp((selectedLogits[k]! - top) / temperature);
      total += selectedWeights[k]!;
    }
    for (let k = 0; k < topK; k++) routing.weights[row * topK + k] = selectedWeights[k]! / total;
  }
  return routing;
}

/** For each expert, the rows that selected it and their flat routing positions. */
export function groupRowsByExpert(
  routing: TokenRouting,
  rows: number,
  topK: number,
  experts: number,
): ExpertAssignment[] {
  if (routing.experts.length !== rows * topK) {
    throw new RangeError(
      `Cannot group rows by expert: routing has ${routing.experts.length} entries, expected rows * topK = ${
        rows * topK
      }`,
    );
  }
  const counts = new Int32Array(experts);
  for (let position = 0; position < routing.experts.length; position++) {
    const expert = routing.experts[position]!;
    if (expert < 0 || expert >= experts) {
      throw new RangeError(
        `Cannot group rows by expert: expert id ${expert} at position ${position} is outside [0, ${experts})`,
      );
    }
    counts[expert]!++;
  }
  const assignments = Array.from(counts, (count) => ({
    rows: new Int32Array(count),
    positions: new Int32Array(count),
  }));
  const filled = new Int32Array(experts);
  for (let position = 0; position < routing.experts.length; position++) {
    const expert = routing.experts[position]!;
    const slot = filled[expert]!++;
    const assignment = assignments[expert]!;
    assignment.rows[slot] = Math.floor(position / topK);
    assignment.positions[slot] = position;
  }
  return assignments;
}

/** Index of the largest unmarked value in `[from, to)`; ties → lower index. */
function argmaxUnmarked(
  values: Float64Array,
  marked: Uint8Array,
  from: number,
  to: number,
): number {
  let best = -1;
  for (let i = from; i < to; i++) {
    if (marked[i] === 0 && (best < 0 || values[i]! > values[best]!)) best = i;
  }
  return best;
}

/** Why the arguments of `routeTokens` are invalid, or `undefined` when they are fine. */
function describeBadRouteArgs(
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
  if (!(temperature > 0)) return `temperature must be > 0, got ${temperature}`;
  const bad = logits.findIndex((value) => !Number.isFinite(value));
  if (bad >= 0) {
    return `logit of row ${Math.floor(bad / experts)}, expert ${bad % experts} is ${logits[bad]}`;
  }
  return undefined;
}
