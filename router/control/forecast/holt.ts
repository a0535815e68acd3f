/**
 * @module Holt's linear (additive) trend: level and trend smoothed with α and β, fitted
 * by minimising the one-step-ahead squared error (grid, then Nelder–Mead). Exact on a
 * pure linear trend: the state starts at level y₀ and trend y₁ − y₀, so no error ever
 * arises and the fit keeps it.
 */
import { analyticBand, checkForecastInput, type Forecaster } from "./forecaster.ts";
import { minimiseInUnitBox } from "./_nelder_mead.ts";

/** Level and trend after filtering, and the one-step squared-error sum. */
export interface HoltState {
  level: number;
  trend: number;
  sse: number;
  /** One-step errors counted in `sse`. */
  count: number;
}

/** Runs Holt's filter over `history` with damping `phi` (1 = undamped). */
export function holtFilter(
  history: readonly number[],
  alpha: number,
  beta: number,
  phi = 1,
): HoltState {
  let level = history[0]!;
  let trend = history.length > 1 ? history[1]! - history[0]! : 0;
  let sse = 0;
  for (let t = 1; t < history.length; t++) {
    const y = history[t]!;
    const predicted = level + phi * trend;
    const error = y - predicted;
    sse += error * error;
    const next = predicted + alpha * error;
    trend = phi * trend + beta * (next - level - phi * trend);
    level = next;
  }
  return { level, trend, sse, count: Math.max(0, history.length - 1) };
}

/** Points the fit looks at: Holt is a local model, older history barely moves (α, β). */
const FIT_WINDOW = 2000;

/** The (α, β) of Holt's method with the least one-step SSE on (the tail of) `history`. */
export function fitHolt(history: readonly number[], phi = 1): { alpha: number; beta: number } {
  const tail = history.slice(-FIT_WINDOW);
  const { point } = minimiseInUnitBox(
    ([alpha, beta]) => holtFilter(tail, alpha!, beta!, phi).sse,
    { grid: [[0.1, 0.4, 0.8], [0, 0.05, 0.3]], maxEvaluations: 40 },
  );
  return { alpha: point[0]!, beta: point[1]! };
}

/** Holt's method with fixed (α, β), or fitted on each call when `params` is absent. */
function holtWith(params?: { alpha: number; beta: number }): Forecaster {
  const forecaster: Forecaster = {
    name: "holt",
    minHistory: () => 3,
    forecast(history, horizon, options) {
      checkForecastInput(forecaster, history, horizon, options);
      const { alpha, beta } = params ?? fitHolt(history);
      const state = holtFilter(history, alpha, beta);
      const mean: number[] = [];
      for (let h = 1; h <= horizon; h++) mean.push(state.level + h * state.trend);
      return analyticBand(mean, Math.sqrt(state.sse / Math.max(1, state.count)));
    },
    withParametersFrom: (history) => holtWith(fitHolt(history)),
  };
  return forecaster;
}

/** Holt's additive-trend forecaster. */
export const holt: Forecaster = holtWith();
