/**
 * @module Fits a routing-only per-expert bias to a layer's recorded gate logits, the
 * auxiliary-loss-free way (DeepSeek-V3): repeat "route with the bias, count each
 * expert's selections, raise the bias of under-loaded experts and lower the over-loaded
 * ones by γ" and keep the most balanced iterate. Pure.
 *
 * The bias lives where the routing family adds `e_score_correction_bias`: on the scores
 * (softmax probabilities or sigmoids, see `routing.ts`), on top of the model's own bias
 * (`gate.bias`), which the fit keeps and returns the delta to. γ is relative to the
 * spread of the scores (their standard deviation) so one setting works for any gate
 * scale, and it decays linearly so the last steps settle.
 */
import { balancedness } from "../../shared/balancedness.ts";
import type { GateOptions } from "./gate_options.ts";
import { routeTokens, selectionScores } from "./routing.ts";

/** Options of {@linkcode fitRoutingBias}. */
export interface FitBiasOptions {
  /** Update steps (default 100). */
  steps?: number;
  /** First step size as a fraction of the logits' standard deviation (default 0.05). */
  rate?: number;
}

/** The fitted bias and the balance of the selections with and without it. */
export interface FittedBias {
  /** The routing-only bias to add on top of `gate.bias`. */
  bias: Float32Array;
  balancednessBefore: number;
  balancednessAfter: number;
}

/** Selections per expert under `options`. */
export function selectionCounts(
  logits: Float32Array,
  rows: number,
  experts: number,
  options: GateOptions,
): number[] {
  const counts = new Array<number>(experts).fill(0);
  for (const expert of routeTokens(logits, rows, experts, options).experts) counts[expert]!++;
  return counts;
}

function standardDeviation(values: Float64Array): number {
  if (values.length === 0) return 0;
  let sum = 0;
  for (const v of values) sum += v;
  const mean = sum / values.length;
  let squares = 0;
  for (const v of values) squares += (v - mean) ** 2;
  return Math.sqrt(squares / values.length);
}

/** Fits a bias for `rows` tokens' `logits` (`[rows, experts]`); see the module doc. */
export function fitRoutingBias(
  logits: Float32Array,
  rows: number,
  experts: number,
  gate: GateOptions,
  options: FitBiasOptions = {},
): FittedBias {
  const steps = options.steps ?? 100;
  const scores = selectionScores(logits, rows, experts, { scoring: gate.scoring });
  const gamma0 = (options.rate ?? 0.05) * (standardDeviation(scores) || 1);
  const base = gate.bias;
  const withDelta = (delta: Float32Array): GateOptions => ({
    ...gate,
    bias: base === undefined ? delta : delta.map((value, e) => value + base[e]!),
  });
  const before = balancedness(selectionCounts(logits, rows, experts, gate));
  const bias = new Float32Array(experts);
  let best = { bias: new Float32Array(experts), balance: before };
  for (let step = 0; step < steps && rows > 0; step++) {
    const counts = selectionCounts(logits, rows, experts, withDelta(bias));
    const balance = balancedness(counts);
    if (balance > best.balance) best = { bias: bias.slice(), balance };
    const mean = counts.reduce((a, b) => a + b, 0) / experts;
    const gamma = gamma0 * (1 - step / steps);
    for (let e = 0; e < experts; e++) bias[e]! += gamma * Math.sign(mean - counts[e]!);
  }
  return { bias: best.bias, balancednessBefore: before, balancednessAfter: best.balance };
}
