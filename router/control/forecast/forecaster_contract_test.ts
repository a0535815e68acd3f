/** @module Every forecaster on series with known answers, plus the interface's input checks. */
import assert from "node:assert/strict";
import type { Forecaster } from "./forecaster.ts";
import { FORECASTERS } from "./forecasters.ts";
import { holt } from "./holt.ts";
import { holtWinters, usesWeeklySeason } from "./holt_winters.ts";
import { seasonalNaive } from "./seasonal_naive.ts";
import { seasonalShift } from "./seasonal_shift.ts";

const M = 24;
const season = (t: number) => 10 + 5 * Math.sin((2 * Math.PI * t) / M) + (t % M === 3 ? 4 : 0);

function assertForecast(forecaster: Forecaster, history: number[], expected: number[], m = M) {
  const { mean, lower, upper } = forecaster.forecast(history, expected.length, { seasonLength: m });
  assert.equal(mean.length, expected.length);
  mean.forEach((value, h) =>
    assert.ok(
      Math.abs(value - expected[h]!) < 1e-6,
      `${forecaster.name} step ${h + 1}: expected ${expected[h]}, got ${value}`,
    )
  );
  lower.forEach((low, h) => assert.ok(low <= mean[h]! + 1e-9 && mean[h]! <= upper[h]! + 1e-9));
}

function range(from: number, to: number, f: (t: number) => number) {
  return Array.from({ length: to - from }, (_, i) => f(from + i));
}

Deno.test("every forecaster forecasts a constant exactly", () => {
  const history = new Array<number>(3 * M).fill(7);
  for (const forecaster of FORECASTERS) assertForecast(forecaster, history, new Array(50).fill(7));
});

Deno.test("seasonal naive, seasonal shift and Holt–Winters forecast a pure season exactly", () => {
  const history = range(0, 3 * M + 5, season);
  const expected = range(3 * M + 5, 3 * M + 5 + 2 * M + 3, season); // beyond one season too
  for (const forecaster of [seasonalNaive, seasonalShift, holtWinters]) {
    assertForecast(forecaster, history, expected);
  }
});

Deno.test("Holt forecasts a pure linear trend exactly; Holt–Winters a trend plus season", () => {
  const line = (t: number) => 3 + 0.5 * t;
  assertForecast(holt, range(0, 40, line), range(40, 70, line));
  const both = (t: number) => line(t) + season(t) - 10;
  assertForecast(holtWinters, range(0, 3 * M, both), range(3 * M, 5 * M, both));
});

Deno.test("Holt–Winters adds the weekly season from two weeks of history", () => {
  const m = 4;
  // Weekends (days 5 and 6 of each week) are quieter; the daily shape repeats.
  const weekly = (t: number) => [1, 3, 5, 2][t % m]! + (Math.floor(t / m) % 7 >= 5 ? -2 : 2);
  assert.equal(usesWeeklySeason(13 * m, m), false);
  assert.equal(usesWeeklySeason(14 * m, m), true);
  const history = range(0, 15 * m, weekly);
  assertForecast(holtWinters, history, range(15 * m, 22 * m, weekly), m);
  // The daily-only seasonal naive cannot know that tomorrow is a weekend day.
  const naive = seasonalNaive.forecast(history, 7 * m, { seasonLength: m }).mean;
  assert.notDeepEqual(naive, range(15 * m, 22 * m, weekly));
});

Deno.test("forecasters reject a bad horizon and too short a history, naming the problem", () => {
  assert.throws(() => holt.forecast([1, 2, 3], 0, { seasonLength: M }), /horizon must be/);
  assert.throws(
    () => holtWinters.forecast(range(0, M, season), 3, { seasonLength: M }),
    /holt_winters: needs 48 history points, got 24/,
  );
  assert.throws(() => seasonalNaive.forecast([1], 1, { seasonLength: 0 }), /seasonLength/);
});
