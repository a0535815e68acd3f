import assert from "node:assert/strict";
import { comparisonMape, ForecastComparison } from "./forecast_compare.ts";
import type { TrafficSource } from "../../router/control/prewarm/prewarm_types.ts";

const MIN = 60_000;

function source(tokensPerS: (now: number) => number): TrafficSource {
  return {
    forecastVolume: (now) =>
      Promise.resolve({
        bucketMs: MIN,
        model: "fixed",
        points: [0, 1, 2].map((h) => ({
          at: Math.floor(now / MIN) * MIN + (h + 1) * MIN,
          tokensPerS: tokensPerS(now) * (h + 1),
        })),
      }),
    observedMix: () => Promise.resolve(null),
    observedTokensPerS: () => Promise.resolve(null),
    affinity: () => Promise.resolve(null),
  } as TrafficSource;
}

Deno.test("ForecastComparison keeps each source's point for the bucket the tick runs in", async () => {
  const compare = new ForecastComparison({ a: source(() => 10), b: source(() => 20) }, MIN, MIN);
  await compare.record(5 * MIN);
  await compare.record(6 * MIN + 30_000);
  assert.deepEqual([...compare.predictions.get("a")!], [[5 * MIN, 10], [6 * MIN, 10]]);
  assert.deepEqual([...compare.predictions.get("b")!], [[5 * MIN, 20], [6 * MIN, 20]]);
});

Deno.test("comparisonMape: hand-computed, buckets without traffic skipped, missing counted", () => {
  const predictions = new Map<number, number | null>([[0, 90], [1, 60], [2, null], [3, 5]]);
  const observed = (from: number) => [100, 50, 40, 0][from]!;
  // |90−100|/100 = 0.1, |60−50|/50 = 0.2 → 0.15; bucket 2 missing; bucket 3 had no traffic.
  const all = comparisonMape(predictions, observed, () => true);
  assert.equal(all.count, 2);
  assert.equal(all.missing, 1);
  assert.ok(Math.abs(all.mape! - 0.15) < 1e-12);
  assert.equal(comparisonMape(predictions, observed, (f) => f === 0).mape, 0.1);
  assert.equal(comparisonMape(predictions, observed, () => false).mape, null);
});
