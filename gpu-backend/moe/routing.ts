/**
 * @module Gated top-k routing of tokens to experts (pure math, no I/O), for the routing
 * families of real MoE models.
 *
 * Design. The general rule is the gate of DeepSeek-V3's reference inference code
 * (`Gate.forward` in DeepSeek-V3 `inference/model.py`); every family is a setting of it.
 * For each token (row) with logits `l [E]`:
 *
 * Step 1 (scores): `s = softmax(l)` over all experts, or `s_e = sigmoid(l_e)` (`scoring`).
 * Step 2 (selection scores): `c = s + bias`, the selection-only bias
 *   (`e_score_correction_bias` of the manifest plus any live routing-only bias).
 * Step 3 (group limit, only when `groups > 1`): the experts are split into `groups`
 *   contiguous groups; a group's score is its best `c` (`max`) or the sum of its best two
 *   (`sum_top2`); the `topkGroup` best groups are kept (ties → lower group index) and every
 *   other expert is excluded.
 * Step 4 (top-k): the `topK` best eligible experts by `c`, best first, ties → lower index.
 * Step 5 (weights): the *unbiased* scores of the chosen experts at the temperature
 *   (`softmax(l / T)` or `sigmoid(l / T)`), divided by their sum when `normalize`
 *   (`norm_topk_prob`; a sigmoid sum gets DeepSeek-V3's `+ 1e-20`), times `scale`
 *   (`routed_scaling_factor`).
 *
 * The families (Hugging Face transformers modelling code, `route_tokens_to_experts` /
 * the sparse MoE block's forward):
 * - Mixtral: `softmax → topk → w / Σw` (always renormalised), scale 1.
 * - Qwen2-MoE, Qwen3-MoE, OLMoE: `softmax → topk → (w / Σw if norm_topk_prob)`; Qwen2-MoE and
 *   OLMoE ship `norm_topk_prob: false`, Qwen3-MoE `true`.
 * - DeepSeek-V2: `softmax`, `group_limited_greedy` = group score `max` over `n_group`
 *   groups keeping `topk_group`, then `topk`; weights `× routed_scaling_factor`
 *   (renormalised only when `norm_topk_prob`, then unscaled — the original
 *   DeepSeek-V2 code; the importer writes that as `norm_topk_prob: true`, scale 1).
 * - DeepSeek-V3: `sigmoid`, selection on `s + e_score_correction_bias`, group score =
 *   sum of the top-2, `topk_group` of `n_group`, weights = unbiased `s` of the chosen,
 *   `/ (Σ + 1e-20)` when `norm_topk_prob`, `× routed_scaling_factor`.
 * Excluded experts never win: DeepSeek's reference masks them with `-inf`; transformers
 * fills `0.0`, which agrees whenever `top_k` eligible experts score above 0 (always for
 * softmax scores, and for sigmoid scores unless the bias drives them negative).
 *
 * Invariants: selection uses the scores at temperature 1, so temperature changes only the
 * weights, never the choice (bit for bit). With the defaults (softmax, no bias, `max`,
 * renormalised, scale 1) the choice is the top-k of the logits and the weights are the
 * softmax of the selected logits — Switchyard's routing before families existed.
 * Scores and weights are computed in float64, then stored as float32.
 */
import type { ModelManifest } from "../../shared/model_manifest.ts";
import { describeBadRouteArgs, type GateOptions } from "./gate_options.ts";

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

/** Gate options of a model manifest (its router family), with a temperature (default 1). */
export function gateOptionsFor(manifest: ModelManifest, temperature = 1): GateOptions {
  const router = manifest.router;
  return {
    topK: manifest.top_k,
    groups: manifest.groups,
    topkGroup: manifest.topk_group ?? manifest.groups,
    temperature,
    scoring: router.scoring,
    groupScore: router.group_score,
    normalize: router.norm_topk_prob,
    scale: router.routed_scaling_factor,
  };
}

const correctionBiases = new WeakMap<ModelManifest, Float32Array[]>();

/**
 * The selection bias of `layer`: the manifest's `e_score_correction_bias` plus `extra`
 * (a live routing-only bias), or `undefined` when there is neither.
 */
export function selectionBiasFor(
  manifest: ModelManifest,
  layer: number,
  extra?: Float32Array,
): Float32Array | undefined {
  const rows = manifest.router.e_score_correction_bias;
  if (rows === undefined) return extra;
  let biases = correctionBiases.get(manifest);
  if (biases === undefined) {
    biases = rows.map((row) => Float32Array.from(row));
    correctionBiases.set(manifest, biases);
  }
  const own = biases[layer];
  if (own === undefined || extra === undefined) return own ?? extra;
  return own.map((value, expert) => value + (extra[expert] ?? 0));
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
  const sigmoid = options.scoring === "sigmoid";
  const sumTop2 = options.groupScore === "sum_top2";
  const normalize = options.normalize ?? true;
  const scale = options.scale ?? 1;
  const groupSize = experts / groups;
  const routing: TokenRouting = {
    experts: new Int32Array(rows * topK),
    weights: new Float32Array(rows * topK),
  };
  const choice = new Float64Array(experts);
  const eligible = new Uint8Array(experts);
  const taken = new Uint8Array(groups);
  const groupScores = new Float64Array(groups);
  const chosen = new Int32Array(topK);
  const weights = new Float64Array(topK);

  for (let row = 0; row < rows; row++) {
    const row0 = row * experts;
    // Steps 1–2: selection scores at temperature 1, plus the bias.
    scoreRow(logits, row0, experts, sigmoid, 1, choice);
    if (bias !== undefined) { for (let e = 0; e < experts; e++) choice[e]! += bias[e]!; }
    // Step 3: group limit.
    if (groups > 1) {
      for (let g = 0; g < groups; g++) {
        groupScores[g] = groupScore(choice, g * groupSize, (g + 1) * groupSize, sumTop2);
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
    // Step 4: top-k over the eligible experts (strict `>` scanning upwards → lower index wins ties).
    for (let k = 0; k < topK; k++) {
      let best = -1;
      for (let e = 0; e < experts; e++) {
        if (eligible[e] === 1 && (best < 0 || choice[e]! > choice[best]!)) best = e;
      }
      eligible[best] = 0;
      chosen[k] = best;
    }
    // Step 5: weights from the unbiased scores of the chosen experts.
    chosenWeights(logits, row0, experts, chosen, { sigmoid, normalize, temperature }, weights);
    for (let k = 0; k < topK; k++) {
      routing.experts[row * topK + k] = chosen[k]!;
      routing.weights[row * topK + k] = weights[k]! * scale;
    }
  }
  return routing;
}

/** Scores of one row `[experts]` at `temperature` into `out`: softmax or sigmoid, float64. */
function scoreRow(
  logits: Float32Array,
  row0: number,
  experts: number,
  sigmoid: boolean,
  temperature: number,
  out: Float64Array,
): void {
  if (sigmoid) {
    for (let e = 0; e < experts; e++) out[e] = 1 / (1 + Math.exp(-logits[row0 + e]! / temperature));
    return;
  }
  let top = -Infinity;
  for (let e = 0; e < experts; e++) top = Math.max(top, logits[row0 + e]!);
  let total = 0;
  for (let e = 0; e < experts; e++) {
    out[e] = Math.exp((logits[row0 + e]! - top) / temperature);
    total += out[e]!;
  }
  for (let e = 0; e < experts; e++) out[e]! /= total;
}

/**
 * Unbiased scores of the `chosen` experts at the temperature, normalised or not, into `out`.
 * Renormalised softmax needs only the chosen logits: the full softmax's sum cancels.
 */
function chosenWeights(
  logits: Float32Array,
  row0: number,
  experts: number,
  chosen: Int32Array,
  rule: { sigmoid: boolean; normalize: boolean; temperature: number },
  out: Float64Array,
): void {
  const { sigmoid, normalize, temperature } = rule;
  let total = 0;
  if (sigmoid) {
    chosen.forEach((e, k) => {
      out[k] = 1 / (1 + Math.exp(-logits[row0 + e]! / temperature));
      total += out[k]!;
    });
    if (normalize) { for (let k = 0; k < chosen.length; k++) out[k]! /= total + 1e-20; }
    return;
  }
  let top = -Infinity;
  if (normalize) { for (const e of chosen) top = Math.max(top, logits[row0 + e]!); }
  else for (let e = 0; e < experts; e++) top = Math.max(top, logits[row0 + e]!);
  chosen.forEach((e, k) => {
    out[k] = Math.exp((logits[row0 + e]! - top) / temperature);
    total += out[k]!;
  });
  if (!normalize) {
    total = 0;
    for (let e = 0; e < experts; e++) total += Math.exp((logits[row0 + e]! - top) / temperature);
  }
  for (let k = 0; k < chosen.length; k++) out[k]! /= total;
}

/** Score of the group `[from, to)`: its best value, or its best two summed. */
function groupScore(values: Float64Array, from: number, to: number, sumTop2: boolean): number {
  let first = -Infinity;
  let second = -Infinity;
  for (let i = from; i < to; i++) {
    const v = values[i]!;
    if (v > first) {
      second = first;
      first = v;
    } else if (v > second) {
      second = v;
    }
  }
  return sumTop2 ? first + second : first;
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

/** Selection scores `[rows, experts]` (scores at temperature 1 plus the bias), float64. */
export function selectionScores(
  logits: Float32Array,
  rows: number,
  experts: number,
  options: Pick<GateOptions, "scoring" | "bias">,
): Float64Array {
  const out = new Float64Array(rows * experts);
  const row = new Float64Array(experts);
  for (let r = 0; r < rows; r++) {
    scoreRow(logits, r * experts, experts, options.scoring === "sigmoid", 1, row);
    for (let e = 0; e < experts; e++) out[r * experts + e] = row[e]! + (options.bias?.[e] ?? 0);
  }
  return out;
}
