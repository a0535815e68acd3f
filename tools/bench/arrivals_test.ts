import assert from "node:assert/strict";
import { createRandom } from "../model/prng.ts";
import { gammaGaps } from "./arrivals.ts";

function moments(values: readonly number[]) {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length;
  return { mean, cv: Math.sqrt(variance) / mean };
}

Deno.test("gammaGaps() keeps the mean gap at 1/rate and sets the gap CV to 1/√burstiness", () => {
  for (const burstiness of [0.25, 0.5, 1, 2, 4]) {
    const gap = gammaGaps(createRandom(7), burstiness);
    const gaps = Array.from({ length: 40_000 }, () => gap(50));
    const { mean, cv } = moments(gaps);
    assert.ok(Math.abs(mean - 1 / 50) / (1 / 50) < 0.03, `burstiness ${burstiness}: mean ${mean}`);
    const expected = 1 / Math.sqrt(burstiness);
    assert.ok(Math.abs(cv - expected) / expected < 0.05, `burstiness ${burstiness}: cv ${cv}`);
    assert.ok(gaps.every((g) => g > 0 && Number.isFinite(g)));
  }
});

Deno.test("gammaGaps() is reproducible from its seed and refuses a bad burstiness", () => {
  const a = gammaGaps(createRandom(3), 0.5);
  const b = gammaGaps(createRandom(3), 0.5);
  assert.deepEqual([a(10), a(10), a(20)], [b(10), b(10), b(20)]);
  assert.throws(() => gammaGaps(createRandom(1), 0), /burstiness must be > 0, got 0/);
  assert.throws(() => gammaGaps(createRandom(1), Number.NaN), /burstiness must be > 0/);
});
