/**
 * @module Seasonal mean + level shift: a future bucket is the mean of the same bucket in
 * the last K seasons (K ≤ 3, as many as the history holds), shifted by how far the
 * recent level (the last `w` buckets, one hour of the day) sits above or below the same
 * window in those seasons. Seasonal naive reacts to nothing that happened today and
 * carries one day's noise; averaging K days cuts the noise, the shift carries today's
 * level (a slow day, growth, the tail of an event) into the next hours. Exact on a pure
 * season and on a constant.
 */
import { analyticBand, checkForecastInput, type Forecaster, rmsLagError } from "./forecaster.ts";

/** Buckets in the level window: one hour of a day-long season, at least 1. */
export function shiftWindow(seasonLength: number): number {
  return Math.max(1, Math.round(seasonLength / 24));
}

function windowMean(y: readonly number[], from: number, to: number): number {
  let sum = 0;
  for (let t = from; t < to; t++) sum += y[t]!;
  return sum / (to - from);
}

/** The seasonal-mean + level-shift forecaster. */
export const seasonalShift: Forecaster = {
  name: "seasonal_shift",
  minHistory: ({ seasonLength }) => seasonLength + shiftWindow(seasonLength),
  forecast(history, horizon, options) {
    checkForecastInput(seasonalShift, history, horizon, options);
    const m = options.seasonLength;
    const w = shiftWindow(m);
    const n = history.length;
    const seasons = Math.min(3, Math.floor((n - w) / m));
    // Step 1: today's level against the same window in the last `seasons` days.
    let past = 0;
    for (let k = 1; k <= seasons; k++) past += windowMean(history, n - w - k * m, n - k * m);
    const shift = windowMean(history, n - w, n) - past / seasons;
    // Step 2: seasonal mean of each future bucket (lags of whole seasons that exist).
    const mean: number[] = [];
    for (let h = 0; h < horizon; h++) {
      const first = Math.floor(h / m) + 1;
      let sum = 0;
      let count = 0;
      for (let k = first; k < first + seasons; k++) {
        const t = n + h - k * m;
        if (t < 0) break;
        sum += history[t]!;
        count++;
      }
      mean.push(sum / count + shift);
    }
    return analyticBand(mean, rmsLagError(history, m) / Math.sqrt(2));
  },
};
