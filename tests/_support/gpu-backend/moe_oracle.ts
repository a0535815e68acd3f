/**
 * @module Test support: an independent float64 MoE forward pass — routing written here
 * from the model format's rules for the default router family (selection scores =
 * softmax of the logits + the selection-only bias; group limit on the best selection
 * score per group; top-k with ties to the lower index; weights = softmax of the chosen
 * experts' logits ÷ temperature, renormalised), not with the backend's routing code —
 * over injected gate and expert functions, so it can check any expert graph the tests
 * build. Models with other router families are out of its scope.
 *
 * Logits are rounded to float32 before routing, as a backend that gets float32 logits
 * from onnxruntime sees them.
 */
import type { ModelManifest } from "../../../shared/model_manifest.ts";

/** The model's parts as float64 functions of one layer. */
export interface OracleParts {
  /** Gate logits `[experts]` of one row. */
  gate(layer: number, row: Float64Array): ArrayLike<number>;
  /** A routed expert's output `[d]` of one row. */
  expert(layer: number, expert: number, row: Float64Array): ArrayLike<number>;
  /** A shared expert's output `[d]` of one row. */
  shared(layer: number, expert: number, row: Float64Array): ArrayLike<number>;
}

/** Options of {@linkcode oracleForward}. */
export interface OracleOptions {
  temperature?: number;
  /** Routing-only bias per layer (`[experts]`). */
  bias?: readonly (ArrayLike<number> | undefined)[];
}

/** The oracle's outputs. */
export interface OracleResult {
  output: Float32Array;
  expertIds: Int32Array;
  expertWeights: Float32Array;
}

/** Runs every layer on `tokens` `[rows, d_model]`. */
export function oracleForward(
  manifest: ModelManifest,
  parts: OracleParts,
  tokens: Float32Array,
  rows: number,
  options: OracleOptions = {},
): OracleResult {
  const router = manifest.router;
  if (
    router.scoring !== "softmax" || router.group_score !== "max" || !router.norm_topk_prob ||
    router.routed_scaling_factor !== 1 || router.e_score_correction_bias !== undefined
  ) {
    throw new RangeError("Cannot run the oracle: it knows only the default router family");
  }
  const d = manifest.d_model;
  const k = manifest.top_k;
  const expertIds = new Int32Array(manifest.layers * rows * k);
  const expertWeights = new Float32Array(manifest.layers * rows * k);
  let hidden = Float64Array.from(tokens);
  for (let layer = 0; layer < manifest.layers; layer++) {
    const next = hidden.slice();
    for (let r = 0; r < rows; r++) {
      const row = hidden.subarray(r * d, (r + 1) * d);
      const logits = Array.from(parts.gate(layer, row), Math.fround);
      const { experts, weights } = route(
        manifest,
        logits,
        options.bias?.[layer],
        options.temperature ?? 1,
      );
      experts.forEach((expert, j) => {
        expertIds[(layer * rows + r) * k + j] = expert;
        expertWeights[(layer * rows + r) * k + j] = weights[j]!;
        const out = parts.expert(layer, expert, row);
        for (let c = 0; c < d; c++) next[r * d + c]! += weights[j]! * out[c]!;
      });
      for (let s = 0; s < manifest.shared_experts; s++) {
        const out = parts.shared(layer, s, row);
        for (let c = 0; c < d; c++) next[r * d + c]! += out[c]!;
      }
    }
    hidden = next;
  }
  return { output: Float32Array.from(hidden), expertIds, expertWeights };
}

function route(
  manifest: ModelManifest,
  logits: number[],
  bias: ArrayLike<number> | undefined,
  temperature: number,
): { experts: number[]; weights: number[] } {
  const count = manifest.experts;
  const peak = Math.max(...logits);
  const exps = logits.map((l) => Math.exp(l - peak));
  const sum = exps.reduce((a, b) => a + b, 0);
  const score = (e: number) => exps[e]! / sum + (bias?.[e] ?? 0);
  const groups = manifest.groups;
  const size = count / groups;
  let eligible = Array.from({ length: count }, (_, e) => e);
  if (groups > 1) {
    const best = Array.from(
      { length: groups },
      (_, g) => Math.max(...eligible.slice(g * size, (g + 1) * size).map(score)),
    );
    const order = best.map((value, g) => ({ value, g })).sort((a, b) =>
      b.value - a.value || a.g - b.g
    );
    const kept = new Set(order.slice(0, manifest.topk_group ?? groups).map((x) => x.g));
    eligible = eligible.filter((e) => kept.has(Math.floor(e / size)));
  }
  const experts = eligible.map((e) => ({ e, s: score(e) }))
    .sort((a, b) => b.s - a.s || a.e - b.e)
    .slice(0, manifest.top_k)
    .map((x) => x.e);
  const top = Math.max(...experts.map((e) => logits[e]!));
  const raw = experts.map((e) => Math.exp((logits[e]! - top) / temperature));
  const total = raw.reduce((a, b) => a + b, 0);
  return { experts, weights: raw.map((w) => w / total) };
}
