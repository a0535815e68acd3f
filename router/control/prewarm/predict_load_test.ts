import assert from "node:assert/strict";
import { estimateCapacity } from "./capacity.ts";
import { mixAt, peakPoint, predictExpertLoad, predictVolume } from "./predict_load.ts";

const HOUR = 3_600_000;

Deno.test("predictVolume() applies active events and adds a point for a leading one", () => {
  const now = 0;
  const points = [1, 2, 3].map((m) => ({ at: m * 60_000, tokensPerS: 10 }));
  const during = { name: "d", start: 120_000, end: 150_000, multiplier: 3 };
  const later = { name: "l", start: 2 * HOUR, end: 3 * HOUR, multiplier: 5, leadTimeMs: 3 * HOUR };
  const far = { name: "f", start: 5 * HOUR, end: 6 * HOUR, multiplier: 9 };
  const predicted = predictVolume(points, [during, later, far], { now, defaultLeadMs: HOUR });
  assert.deepEqual(predicted.map((p) => [p.at, p.tokensPerS, p.event?.name ?? null]), [
    [60_000, 10, null],
    [120_000, 30, "d"],
    [180_000, 10, null],
    [2 * HOUR, 50, "l"],
  ]);
  assert.equal(peakPoint(predicted)?.event?.name, "l");
  assert.equal(peakPoint([]), null);
  // No forecast: a leading event scales the fallback volume.
  const fallback = predictVolume([], [later], { now, defaultLeadMs: HOUR, fallbackTokensPerS: 4 });
  assert.deepEqual(fallback.map((p) => p.tokensPerS), [20]);
});

Deno.test("mixAt() uses the event's mix at a point it covers, else the observed mix", () => {
  const event = { name: "e", start: 0, end: 1, multiplier: 2, mix: { a: 3, b: 1 } };
  assert.deepEqual(mixAt({ at: 0, tokensPerS: 1, event }, { c: 1 }), { a: 0.75, b: 0.25 });
  assert.deepEqual(mixAt({ at: 0, tokensPerS: 1, event: null }, { c: 2, d: 0 }), { c: 1 });
  assert.deepEqual(mixAt({ at: 0, tokensPerS: 1, event: null }, null), {});
});

Deno.test("predictExpertLoad() is volume × mix × affinity, each layer summing to top-k", () => {
  const affinity = { a: [[1, 0, 1]], "*": [[1, 1, 1]] };
  const load = predictExpertLoad(30, { a: 0.5, other: 0.5 }, affinity, {
    layers: 1,
    experts: 3,
    topK: 2,
  })!;
  // a: 15 tokens/s × [1, 0, 1]; other (uses "*"): 15 × [2/3, 2/3, 2/3].
  assert.deepEqual(load[0]!.map((v) => Math.round(v * 1e9) / 1e9), [25, 10, 25]);
  assert.equal(load[0]!.reduce((s, v) => s + v, 0), 60);
  assert.deepEqual(predictExpertLoad(3, {}, { a: [[1, 2]] }, { layers: 1, experts: 3 }), [[
    1,
    2,
    0,
  ]]);
  assert.equal(predictExpertLoad(1, {}, { a: [[1, 1, 1, 1]] }, { layers: 1, experts: 3 }), null);
  assert.equal(predictExpertLoad(1, {}, { a: [[0, 0, 0]] }, { layers: 1, experts: 3 }), null);
});

Deno.test("estimateCapacity() is the median of the load signal's capacity over fresh backends", () => {
  const b = (tokensPerS: number, utilisation: number, stale = false) => ({
    id: "x",
    stale,
    tokensPerS,
    utilisation,
  });
  assert.equal(estimateCapacity({ backends: [b(100, 0.5), b(90, 0.3), b(10, 0.01)] }), 250);
  assert.equal(estimateCapacity({ backends: [b(100, 0.5, true), b(0, 0.5)] }), null);
  assert.equal(
    estimateCapacity({ backends: [b(300, 1.5)] }),
    300,
    "saturated: measured, not extrapolated",
  );
  assert.equal(estimateCapacity(null), null);
});
