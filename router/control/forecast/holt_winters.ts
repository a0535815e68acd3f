/**
 * @module Holt–Winters additive: level, trend and a daily season (period m), plus a
 * weekly season (period 7m, Taylor's double-seasonal form) once the history covers two
 * weeks. Smoothing parameters minimise the one-step squared error (grid, Nelder–Mead).
 *
 * Equations (w and ω only with the weekly season):
 *   ŷₜ = ℓ + b + dₜ₋ₘ + wₜ₋₇ₘ,  e = yₜ − ŷₜ
 *   ℓ' = ℓ + b + αe,  b' = b + αβe,  dₜ = dₜ₋ₘ + γ(1 − α)e,  wₜ = wₜ₋₇ₘ + ω(1 − α)e
 * (the error-correction form of the textbook updates). Initial state from the first
 * season (or week): level and trend from the means of the first two periods, season
 * values as de-trended deviations from that line, so a pure season, a pure line or a
 * sum of both produce zero error and are forecast exactly.
 */
import { analyticBand, checkForecastInput, type Forecaster } from "./forecaster.ts";
import { minimiseInUnitBox } from "./_nelder_mead.ts";

/** Filter state after the last history point. */
interface HwState {
  level: number;
  trend: number;
  /** `[t mod m]` → latest daily component. */
  daily: Float64Array;
  /** `[t mod 7m]` → latest weekly component; empty without the weekly season. */
  weekly: Float64Array;
  sse: number;
  count: number;
}

function mean(values: readonly number[], from: number, to: number): number {
  let sum = 0;
  for (let t = from; t < to; t++) sum += values[t]!;
  return sum / (to - from);
}

/** The initial state at the end of the first period (`m`, or `7m` when weekly). */
function initialState(y: readonly number[], m: number, weekly: boolean): HwState {
  const period = weekly ? 7 * m : m;
  const first = mean(y, 0, period);
  const trend = y.length >= 2 * period ? (mean(y, period, 2 * period) - first) / period : 0;
  const line = (t: number) => first + trend * (t - (period - 1) / 2);
  const daily = new Float64Array(m);
  const weeklyComponent = new Float64Array(weekly ? period : 0);
  for (let t = 0; t < period; t++) daily[t % m]! += (y[t]! - line(t)) / (period / m);
  if (weekly) {
    for (let t = 0; t < period; t++) weeklyComponent[t] = y[t]! - line(t) - daily[t % m]!;
  }
  return {
    level: line(period - 1),
    trend,
    daily,
    weekly: weeklyComponent,
    sse: 0,
    count: 0,
  };
}

/** Runs the filter over `y` with parameters `[α, β, γ, ω?]`; see the module doc. */
function hwFilter(y: readonly number[], m: number, weekly: boolean, params: readonly number[]) {
  const [alpha, beta, gamma, omega = 0] = params as [number, number, number, number?];
  const state = initialState(y, m, weekly);
  const { daily, weekly: week } = state;
  const period = weekly ? 7 * m : m;
  let { level, trend } = state;
  let sse = 0;
  for (let t = period; t < y.length; t++) {
    const di = t % m;
    const wi = weekly ? t % period : 0;
    const seasonal = daily[di]! + (weekly ? week[wi]! : 0);
    const error = y[t]! - (level + trend + seasonal);
    sse += error * error;
    level = level + trend + alpha * error;
    trend = trend + alpha * beta * error;
    daily[di] = daily[di]! + gamma * (1 - alpha) * error;
    if (weekly) week[wi] = week[wi]! + omega * (1 - alpha) * error;
  }
  return { ...state, level, trend, sse, count: Math.max(0, y.length - period) };
}

/** Whether the weekly season is used: the history covers two weeks. */
export function usesWeeklySeason(historyLength: number, seasonLength: number): boolean {
  return historyLength >= 14 * seasonLength;
}

/** The parameters `[α, β, γ, ω?]` with the least one-step SSE on `history`. */
function fitHoltWinters(history: readonly number[], m: number, weekly: boolean): number[] {
  const grid = [[0.05, 0.3, 0.7], [0, 0.05], [0.05, 0.3], ...(weekly ? [[0.05, 0.3]] : [])];
  return minimiseInUnitBox((p) => hwFilter(history, m, weekly, p).sse, {
    grid,
    maxEvaluations: weekly ? 50 : 40,
  }).point;
}

/** Holt–Winters with fixed parameters (refitted when the weekly season switches on). */
function holtWintersWith(params?: number[]): Forecaster {
  const forecaster: Forecaster = {
    name: "holt_winters",
    minHistory: ({ seasonLength }) => 2 * seasonLength,
    forecast(history, horizon, options) {
      checkForecastInput(forecaster, history, horizon, options);
      const m = options.seasonLength;
      const weekly = usesWeeklySeason(history.length, m);
      const point = params !== undefined && params.length === (weekly ? 4 : 3)
        ? params
        : fitHoltWinters(history, m, weekly);
      return forecastFrom(hwFilter(history, m, weekly, point), history.length, horizon, m, weekly);
    },
    withParametersFrom: (history, { seasonLength }) =>
      holtWintersWith(
        fitHoltWinters(history, seasonLength, usesWeeklySeason(history.length, seasonLength)),
      ),
  };
  return forecaster;
}

/** Holt–Winters additive with daily and (from two weeks of history) weekly season. */
export const holtWinters: Forecaster = holtWintersWith();

/** Forecasts `horizon` buckets from the state after `n` history points. */
function forecastFrom(state: HwState, n: number, horizon: number, m: number, weekly: boolean) {
  const values: number[] = [];
  for (let h = 1; h <= horizon; h++) {
    const t = n - 1 + h;
    const seasonal = state.daily[t % m]! + (weekly ? state.weekly[t % (7 * m)]! : 0);
    values.push(state.level + h * state.trend + seasonal);
  }
  return analyticBand(values, Math.sqrt(state.sse / Math.max(1, state.count)));
}
