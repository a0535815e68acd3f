import assert from "node:assert/strict";
import fc from "fast-check";
import { blendPartial, coveredFraction } from "./partial_bucket.ts";

const MIN = 60_000;

Deno.test("coveredFraction: hand-computed fractions of a 1-minute bucket with a 2 s lag", () => {
  // 32 s into the bucket, data surely in up to 30 s: half.
  assert.equal(coveredFraction(0, MIN, 32_000, 2_000), 0.5);
  // On the minute the bucket that just closed is covered up to 58 s.
  assert.equal(coveredFraction(0, MIN, MIN, 2_000), 58 / 60);
  // Long after it closed: whole.
  assert.equal(coveredFraction(0, MIN, 10 * MIN, 2_000), 1);
  // The bucket that just began: nothing yet.
  assert.equal(coveredFraction(MIN, MIN, MIN + 1_000, 2_000), 0);
});

Deno.test("blendPartial: the scaled partial weighted by the fraction it saw, the forecast for the rest", () => {
  // Half a bucket saw 300 tokens (600 per bucket) and the forecast says 1000: 600/2 + 1000/2.
  assert.equal(blendPartial(300, 0.5, 1000), 800);
  // A quarter saw 100 (400 per bucket), forecast 800: 0.25·400 + 0.75·800 = 700.
  assert.equal(blendPartial(100, 0.25, 800), 700);
  assert.equal(blendPartial(580, 1, 123), 580);
  assert.equal(blendPartial(0, 0, 900), 900);
  assert.throws(() => blendPartial(1, 1.5, 1), /covered fraction/);
});

Deno.test("blendPartial lies between the scaled partial and the forecast (property)", () => {
  fc.assert(fc.property(
    fc.double({ min: 0, max: 1e6, noNaN: true }),
    fc.double({ min: 0.01, max: 1, noNaN: true }),
    fc.double({ min: 0, max: 1e6, noNaN: true }),
    (rate, f, forecast) => {
      const partial = rate * f; // a bucket running at `rate` tokens per bucket, fraction f seen
      const blended = blendPartial(partial, f, forecast);
      const lo = Math.min(rate, forecast), hi = Math.max(rate, forecast);
      const eps = 1e-9 * Math.max(1, hi);
      return blended >= lo - eps && blended <= hi + eps;
    },
  ));
});
