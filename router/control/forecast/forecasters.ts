/**
 * @module The forecasters the service chooses from, simplest first (ties in the
 * backtest go to the simpler model).
 */
import type { Forecaster } from "./forecaster.ts";
import { holt } from "./holt.ts";
import { holtWinters } from "./holt_winters.ts";
import { lastValue } from "./last_value.ts";
import { seasonalNaive } from "./seasonal_naive.ts";
import { seasonalShift } from "./seasonal_shift.ts";

/** Every forecaster, simplest first. */
export const FORECASTERS: readonly Forecaster[] = [
  lastValue,
  seasonalNaive,
  holt,
  holtWinters,
  seasonalShift,
];
