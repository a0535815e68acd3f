/**
 * @module Forecasts one series: backtest every forecaster, keep the one with the lowest
 * MASE, forecast with it, and put empirical intervals around the result.
 *
 * Known events enter as per-bucket factors (`factors[i]`, history then future): the
 * history is divided by them (a past 5× promotion does not teach the models a false
 * level), the models see only this baseline, and the forecast is multiplied back by
 * the future factors. Intervals: the backtest's error quantiles per step (80 % by
 * default, see `errorQuantiles`), in baseline units, scaled by the factor too; without
 * any backtest (history too short) the model's own analytic band is used.
 */
import { type Accuracy, accuracy, backtest, errorQuantiles, selectModel } from "./backtest.ts";
import type { Forecaster } from "./forecaster.ts";
import { FORECASTERS } from "./forecasters.ts";
import { lastValue } from "./last_value.ts";

/** Options of {@linkcode forecastSeries}. */
export interface ForecastSeriesOptions {
  horizon: number;
  seasonLength: number;
  /** `[i]` → event factor of bucket i (history, then the horizon); default all 1. */
  factors?: readonly number[];
  /** Interval coverage; default 0.8. */
  coverage?: number;
  /** Backtest origins; default 8. */
  origins?: number;
  /** Candidates; default {@linkcode FORECASTERS}. */
  forecasters?: readonly Forecaster[];
}

/** The chosen model's forecast and every candidate's backtest accuracy. */
export interface SeriesForecast {
  model: string;
  mean: number[];
  lower: number[];
  upper: number[];
  /** Forecaster name → accuracy over the whole horizon (none when nothing could be tested). */
  backtest: Record<string, Accuracy>;
}

/** Forecasts `history` (oldest first, one value per bucket); see the module doc. */
export function forecastSeries(
  history: readonly number[],
  options: ForecastSeriesOptions,
): SeriesForecast {
  const { horizon, seasonLength } = options;
  const n = history.length;
  const factor = (i: number) => options.factors?.[i] ?? 1;
  if (n === 0) {
    const zeros = new Array<number>(horizon).fill(0);
    return {
      model: lastValue.name,
      mean: zeros,
      lower: [...zeros],
      upper: [...zeros],
      backtest: {},
    };
  }
  // Step 1: baseline without known events.
  const baseline = history.map((value, i) => value / factor(i));
  // Step 2: backtest and select.
  const results = backtest(options.forecasters ?? FORECASTERS, baseline, {
    horizon,
    seasonLength,
    ...(options.origins === undefined ? {} : { origins: options.origins }),
  });
  const chosen = selectModel(results);
  const forecasters = options.forecasters ?? FORECASTERS;
  const forecaster = forecasters.find((f) => f.name === chosen?.name) ?? lastValue;
  // Step 3: forecast the baseline, band from the backtest errors when there are any.
  const forecast = forecaster.forecast(baseline, horizon, { seasonLength });
  let lower = forecast.lower;
  let upper = forecast.upper;
  if (chosen !== undefined) {
    const band = errorQuantiles(chosen, { horizon, coverage: options.coverage ?? 0.8 });
    lower = forecast.mean.map((value, h) => value + band.low[h]!);
    upper = forecast.mean.map((value, h) => value + band.high[h]!);
  }
  // Step 4: future events back in; counts cannot go below zero.
  const floor = history.every((value) => value >= 0) ? 0 : -Infinity;
  const scale = (values: number[]) => values.map((v, h) => Math.max(floor, v * factor(n + h)));
  const summary: Record<string, Accuracy> = {};
  for (const result of results) summary[result.name] = accuracy(result);
  return {
    model: forecaster.name,
    mean: scale(forecast.mean),
    lower: scale(lower),
    upper: scale(upper),
    backtest: summary,
  };
}
