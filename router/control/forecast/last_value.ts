/**
 * @module Last value ("naive"): every future bucket equals the latest one. The yardstick
 * of MASE: its in-sample one-step error is the scale, so it scores about 1.
 */
import { analyticBand, checkForecastInput, type Forecaster, rmsLagError } from "./forecaster.ts";

/** The naive forecaster. */
export const lastValue: Forecaster = {
  name: "last_value",
  minHistory: () => 1,
  forecast(history, horizon, options) {
    checkForecastInput(lastValue, history, horizon, options);
    const last = history[history.length - 1]!;
    return analyticBand(new Array<number>(horizon).fill(last), rmsLagError(history, 1));
  },
};
