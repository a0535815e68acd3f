/** @module Backtest origins, MASE/MAPE on a hand-computed example, selection and intervals. */
import assert from "node:assert/strict";
import {
  accuracy,
  backtest,
  backtestOrigins,
  errorQuantiles,
  quantile,
  selectModel,
} from "./backtest.ts";
import { FORECASTERS } from "./forecasters.ts";
import { forecastSeries } from "./forecast_series.ts";
import { lastValue } from "./last_value.ts";
import { createRandom } from "../../../tools/model/prng.ts";

Deno.test("backtest() computes MASE and MAPE of last value by hand", () => {
  const history = [1, 2, 4, 7, 11];
  assert.deepEqual(backtestOrigins(5, { horizon: 1, seasonLength: 1, origins: 2, stride: 1 }), [
    3,
    4,
  ]);
  const [result] = backtest([lastValue], history, {
    horizon: 1,
    seasonLength: 1,
    origins: 2,
    stride: 1,
  });
  // Origin 3: forecast 4, actual 7, error 3, scale mean(|1|,|2|) = 1.5 → 2.
  // Origin 4: forecast 7, actual 11, error 4, scale mean(1, 2, 3) = 2 → 2.
  assert.deepEqual(result!.errors, [[3], [4]]);
  assert.deepEqual(result!.scales, [1.5, 2]);
  const { mase, mape } = accuracy(result!);
  assert.equal(mase, 2);
  assert.ok(Math.abs(mape! - 100 * (3 / 7 + 4 / 11) / 2) < 1e-9);
});

Deno.test("accuracy() limits to the first steps and skips zero actuals in MAPE", () => {
  const result = {
    name: "x",
    errors: [[1, -2, 4]],
    actuals: [[0, 4, 8]],
    scales: [2],
  };
  assert.deepEqual(accuracy(result, 2), { mase: (0.5 + 1) / 2, mape: 50 });
  assert.deepEqual(accuracy(result), { mase: (0.5 + 1 + 2) / 3, mape: 50 });
});

Deno.test("selection picks a seasonal model on noisy seasonal data", () => {
  const random = createRandom(7);
  const m = 48;
  const history = Array.from(
    { length: 6 * m },
    (_, t) => 100 + 40 * Math.sin((2 * Math.PI * t) / m) + 4 * (random() - 0.5),
  );
  const results = backtest(FORECASTERS, history, { horizon: 12, seasonLength: m });
  const chosen = selectModel(results)!;
  assert.ok(
    ["seasonal_naive", "holt_winters", "seasonal_shift"].includes(chosen.name),
    `chose ${chosen.name}`,
  );
  assert.ok(accuracy(chosen).mase < accuracy(results.find((r) => r.name === "last_value")!).mase);
  const forecast = forecastSeries(history, { horizon: 12, seasonLength: m });
  assert.equal(forecast.model, chosen.name);
  assert.deepEqual(Object.keys(forecast.backtest).sort(), FORECASTERS.map((f) => f.name).sort());
  forecast.mean.forEach((value, h) => {
    assert.ok(forecast.lower[h]! <= value && value <= forecast.upper[h]!);
    const truth = 100 + 40 * Math.sin((2 * Math.PI * (6 * m + h)) / m);
    assert.ok(Math.abs(value - truth) < 6, `step ${h}: ${value} vs ${truth}`);
  });
});

Deno.test("errorQuantiles() pools neighbouring steps and interpolates quantiles", () => {
  assert.equal(quantile([1, 2, 3, 4, 5], 0.5), 3);
  assert.equal(quantile([0, 10], 0.9), 9);
  const result = {
    name: "x",
    errors: [[-1, 5], [1, 7]],
    actuals: [[1, 1], [1, 1]],
    scales: [1, 1],
  };
  // Step 1 alone holds 2 errors, pooled with step 2 it holds 4: [-1, 1, 5, 7].
  const band = errorQuantiles(result, { horizon: 3, coverage: 0.5, minErrors: 4 });
  assert.deepEqual(band.low, [0.5, 0.5, 0.5]);
  assert.deepEqual(band.high, [5.5, 5.5, 5.5]);
});

Deno.test("forecastSeries() removes known past events and applies future ones", () => {
  const history = new Array<number>(60).fill(10);
  const factors = new Array<number>(70).fill(1);
  for (let i = 40; i < 45; i++) (history[i] = 50, factors[i] = 5); // a past 5× event
  for (let i = 63; i < 66; i++) factors[i] = 5; // a scheduled one, steps 4–6
  const forecast = forecastSeries(history, { horizon: 10, seasonLength: 24, factors });
  assert.deepEqual(forecast.mean, [10, 10, 10, 50, 50, 50, 10, 10, 10, 10]);
  assert.deepEqual(forecastSeries([], { horizon: 2, seasonLength: 24 }).mean, [0, 0]);
});

Deno.test("backtest() with known factors forecasts the baseline and scales it back", () => {
  const history = [10, 10, 10, 10, 50, 10];
  const factors = [1, 1, 1, 1, 5, 1];
  const [known] = backtest([lastValue], history, {
    horizon: 1,
    seasonLength: 1,
    origins: 2,
    factors,
  });
  assert.deepEqual(known!.errors, [[0], [0]]);
  const [unknown] = backtest([lastValue], history, { horizon: 1, seasonLength: 1, origins: 2 });
  assert.deepEqual(unknown!.errors, [[40], [-40]]);
});
