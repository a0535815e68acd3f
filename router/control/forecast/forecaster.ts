/**
 * @module The one interface every forecaster implements, and the shapes it returns.
 *
 * A forecaster is a pure function of a history (oldest first, one value per bucket, no
 * gaps) and a horizon: it fits whatever it needs on the history and returns `horizon`
 * point forecasts. `lower`/`upper` are the model's own rough band; the forecast service
 * replaces them with empirical intervals from the backtest (see `backtest.ts`).
 */

/** Options every forecaster takes. */
export interface ForecastOptions {
  /** Buckets per daily season (`24h / bucket`), e.g. 1440 with 1-minute buckets. */
  seasonLength: number;
}

/** `horizon` forecasts, one per future bucket, each with a band. */
export interface Forecast {
  mean: number[];
  lower: number[];
  upper: number[];
}

/** A forecasting method; see the module doc. */
export interface Forecaster {
  /** Stable name used in the API and reports, e.g. `holt_winters`. */
  readonly name: string;
  /** Fewest history points this method needs at `seasonLength`. */
  minHistory(options: ForecastOptions): number;
  /** Forecasts the next `horizon` buckets after `history`. */
  forecast(history: readonly number[], horizon: number, options: ForecastOptions): Forecast;
  /**
   * For fitted models: this forecaster with its parameters fitted once on `history` and
   * then fixed, so a backtest fits once instead of at every origin (no look-ahead: the
   * backtest fits on the history before its first origin).
   */
  withParametersFrom?(history: readonly number[], options: ForecastOptions): Forecaster;
}

/** Throws a `RangeError` unless `history` and `horizon` fit `forecaster`. */
export function checkForecastInput(
  forecaster: Forecaster,
  history: readonly number[],
  horizon: number,
  options: ForecastOptions,
): void {
  if (!Number.isInteger(horizon) || horizon < 1) {
    throw new RangeError(`Cannot forecast: horizon must be an integer >= 1, got ${horizon}`);
  }
  if (!Number.isInteger(options.seasonLength) || options.seasonLength < 1) {
    throw new RangeError(
      `Cannot forecast: seasonLength must be an integer >= 1, got ${options.seasonLength}`,
    );
  }
  const need = forecaster.minHistory(options);
  if (history.length < need) {
    throw new RangeError(
      `Cannot forecast with ${forecaster.name}: needs ${need} history points, got ${history.length}`,
    );
  }
}

/** A band of ±`z`·`sigma`·√step around `mean` (the simple models' analytic band). */
export function analyticBand(mean: number[], sigma: number, z = 1.2816): Forecast {
  const width = mean.map((_, h) => z * sigma * Math.sqrt(h + 1));
  return {
    mean,
    lower: mean.map((value, h) => value - width[h]!),
    upper: mean.map((value, h) => value + width[h]!),
  };
}

/** Root mean square of `history[t] − history[t − lag]` over t ≥ lag (0 for none), no copies. */
export function rmsLagError(history: readonly number[], lag: number): number {
  let sum = 0;
  for (let t = lag; t < history.length; t++) {
    const d = history[t]! - history[t - lag]!;
    sum += d * d;
  }
  return history.length > lag ? Math.sqrt(sum / (history.length - lag)) : 0;
}

/** Root mean square of `errors` (0 for none). */
export function rms(errors: readonly number[]): number {
  if (errors.length === 0) return 0;
  let sum = 0;
  for (const error of errors) sum += error * error;
  return Math.sqrt(sum / errors.length);
}
