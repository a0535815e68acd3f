/**
 * @module Rolling-origin backtest, MASE/MAPE and model selection.
 *
 * Design: origins sit at the end of the history, `stride` buckets apart (the latest one
 * `horizon` buckets before the end); at each origin every forecaster sees only the
 * history before it and forecasts `horizon` buckets, which are compared with what
 * happened. MASE divides each absolute error by the mean absolute one-step change of
 * the history before that origin (the in-sample error of last value), so last value
 * scores about 1 at step 1 and anything below 1 beats it. MAPE skips zero actuals.
 * The origin count bounds the cost: every origin refits every model on up to the whole
 * history (O(n) per objective evaluation).
 */
import type { Forecaster, ForecastOptions } from "./forecaster.ts";

/** Options of {@linkcode backtest}. */
export interface BacktestOptions extends ForecastOptions {
  horizon: number;
  /** Origins at most; default 8. */
  origins?: number;
  /** Buckets between origins; default `max(1, ⌈horizon / 2⌉)`. */
  stride?: number;
  /**
   * Known event factors per bucket (`[i]`, history then beyond): the models see
   * `history / factor` and their forecasts are multiplied back, so errors stay in the
   * history's units. Default: none.
   */
  factors?: readonly number[];
}

/** One forecaster's backtest. */
export interface ModelBacktest {
  name: string;
  /** `[origin][step]` → actual − forecast. */
  errors: number[][];
  /** `[origin][step]` → actual. */
  actuals: number[][];
  /** `[origin]` → MASE scale (mean |Δy| before the origin). */
  scales: number[];
}

/** Accuracy over steps 1..`steps`. */
export interface Accuracy {
  mase: number;
  /** Percent; `null` when every actual was zero. */
  mape: number | null;
}

/** The origins (history lengths) to test, oldest first. */
export function backtestOrigins(n: number, options: BacktestOptions): number[] {
  const count = options.origins ?? 8;
  const stride = options.stride ?? Math.max(1, Math.ceil(options.horizon / 2));
  const origins: number[] = [];
  for (let k = 0; k < count; k++) {
    const origin = n - options.horizon - k * stride;
    if (origin < 2) break;
    origins.unshift(origin);
  }
  return origins;
}

/** Backtests `forecasters` on `history`; one that cannot run at any origin is left out. */
export function backtest(
  forecasters: readonly Forecaster[],
  history: readonly number[],
  options: BacktestOptions,
): ModelBacktest[] {
  const origins = backtestOrigins(history.length, options);
  // Prefix sums of |Δy| give every origin's MASE scale in O(1).
  const absDiff = new Float64Array(history.length);
  for (let t = 1; t < history.length; t++) {
    absDiff[t] = absDiff[t - 1]! + Math.abs(history[t]! - history[t - 1]!);
  }
  const factor = (i: number) => options.factors?.[i] ?? 1;
  const seen = options.factors === undefined ? history : history.map((v, i) => v / factor(i));
  const results: ModelBacktest[] = [];
  for (const forecaster of forecasters) {
    const result: ModelBacktest = { name: forecaster.name, errors: [], actuals: [], scales: [] };
    const need = forecaster.minHistory(options);
    const usable = origins.filter((origin) => origin >= need);
    // Fit once on the history before the first usable origin, then filter at each origin.
    const fixed = usable.length > 1 && forecaster.withParametersFrom
      ? forecaster.withParametersFrom(seen.slice(0, usable[0]), options)
      : forecaster;
    for (const origin of usable) {
      const past = seen.slice(0, origin);
      const { mean } = fixed.forecast(past, options.horizon, options);
      const actual = history.slice(origin, origin + options.horizon);
      result.actuals.push(actual);
      result.errors.push(actual.map((value, h) => value - mean[h]! * factor(origin + h)));
      result.scales.push(absDiff[origin - 1]! / (origin - 1));
    }
    if (result.errors.length > 0) results.push(result);
  }
  return results;
}

/** MASE and MAPE of `result` over its first `steps` steps (default all). */
export function accuracy(result: ModelBacktest, steps = Infinity): Accuracy {
  let scaled = 0;
  let scaledCount = 0;
  let percent = 0;
  let percentCount = 0;
  result.errors.forEach((errors, o) => {
    const scale = result.scales[o]!;
    errors.slice(0, steps).forEach((error, h) => {
      scaled += scale > 0 ? Math.abs(error) / scale : error === 0 ? 0 : Infinity;
      scaledCount++;
      const actual = result.actuals[o]![h]!;
      if (actual !== 0) {
        percent += Math.abs(error / actual);
        percentCount++;
      }
    });
  });
  return {
    mase: scaledCount === 0 ? NaN : scaled / scaledCount,
    mape: percentCount === 0 ? null : (100 * percent) / percentCount,
  };
}

/**
 * Fewest backtest origins a model needs to be selected. One or two origins judge a model
 * on one stretch of history: after a few minutes of bursts Holt won on a single origin and
 * extrapolated the bursts' trend (a live check read 94.5, 126.7 and 179.2 tokens/s while
 * 40 tokens/s flowed steadily); with fewer origins the caller keeps the simplest model.
 */
export const MIN_SELECTION_ORIGINS = 3;

/**
 * The result with the lowest MASE (ties: the earlier, i.e. simpler, model) among those
 * backtested at `minOrigins` origins or more (default {@linkcode MIN_SELECTION_ORIGINS});
 * undefined when none was.
 */
export function selectModel(
  results: readonly ModelBacktest[],
  options: { minOrigins?: number } = {},
): ModelBacktest | undefined {
  const minOrigins = options.minOrigins ?? MIN_SELECTION_ORIGINS;
  let best: { result: ModelBacktest; mase: number } | undefined;
  for (const result of results) {
    if (result.errors.length < minOrigins) continue;
    const { mase } = accuracy(result);
    if (best === undefined || mase < best.mase) best = { result, mase };
  }
  return best?.result;
}

/**
 * Empirical band per step: the `(1 − coverage)/2` and `(1 + coverage)/2` quantiles of the
 * backtest errors at that step, pooling neighbouring steps until at least `minErrors`
 * errors are in the pool (few origins give few errors per step).
 */
export function errorQuantiles(
  result: ModelBacktest,
  options: { horizon: number; coverage?: number; minErrors?: number },
): { low: number[]; high: number[] } {
  const coverage = options.coverage ?? 0.8;
  const minErrors = options.minErrors ?? 20;
  const tested = result.errors[0]?.length ?? 0;
  const low: number[] = [];
  const high: number[] = [];
  for (let h = 0; h < options.horizon; h++) {
    const step = Math.min(h, tested - 1);
    const pool: number[] = [];
    for (let r = 0; pool.length < minErrors && r < tested; r++) {
      for (const errors of result.errors) {
        if (r === 0) pool.push(errors[step]!);
        else {
          if (step - r >= 0) pool.push(errors[step - r]!);
          if (step + r < tested) pool.push(errors[step + r]!);
        }
      }
    }
    pool.sort((a, b) => a - b);
    low.push(quantile(pool, (1 - coverage) / 2));
    high.push(quantile(pool, (1 + coverage) / 2));
  }
  return { low, high };
}

/** Linear-interpolated quantile of sorted `values` (0 for none). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  const position = q * (sorted.length - 1);
  const below = Math.floor(position);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below]! + (position - below) * (sorted[above]! - sorted[below]!);
}
