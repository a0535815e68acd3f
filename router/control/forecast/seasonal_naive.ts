/**
 * @module Seasonal naive: a future bucket equals the same bucket one season (day) earlier.
 * Exact on a pure season; needs one full season of history.
 */
import { analyticBand, checkForecastInput, type Forecaster, rmsLagError } from "./forecaster.ts";

/** The seasonal naive forecaster. */
export const seasonalNaive: Forecaster = {
  name: "seasonal_naive",
  minHistory: ({ seasonLength }) => seasonLength,
  forecast(history, horizon, options) {
    checkForecastInput(seasonalNaive, history, horizon, options);
    const m = options.seasonLength;
    const n = history.length;
    const mean: number[] = [];
    // Step h (0-based) repeats the value m·k − h buckets back, k the fewest whole seasons.
    for (let h = 0; h < horizon; h++) mean.push(history[n - m + (h % m)]!);
    return analyticBand(mean, rmsLagError(history, m), 1.2816);
  },
};
