import assert from "node:assert/strict";
import fc from "fast-check";
import { balancedness, coefficientOfVariation } from "./balancedness.ts";

// Zero or normal magnitudes: subnormal loads times a scale below 1 underflow to 0, which
// changes the loads themselves, not the measure.
const load = fc.oneof(fc.constant(0), fc.double({ min: 1e-6, max: 1e6, noNaN: true }));
const loads = fc.array(load, { minLength: 1, maxLength: 64 });
const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a));

Deno.test("balancedness() is in (0, 1] for any non-negative loads", () => {
  fc.assert(fc.property(loads, (values) => {
    const b = balancedness(values);
    assert.ok(b > 0 && b <= 1, `balancedness ${b} of ${values}`);
    assert.ok(b >= 1 / values.length - 1e-12, "never below 1/n");
  }));
});

Deno.test("balancedness() is 1 and the CV 0 for uniform loads", () => {
  fc.assert(
    fc.property(
      fc.double({ min: 0, max: 1e6, noNaN: true }),
      fc.integer({ min: 1, max: 64 }),
      (value, n) => {
        const values = Array.from({ length: n }, () => value);
        assert.equal(balancedness(values), 1);
        assert.ok(coefficientOfVariation(values) <= 1e-9);
      },
    ),
  );
});

Deno.test("balancedness() and the CV are scale-invariant", () => {
  fc.assert(
    fc.property(loads, fc.double({ min: 1e-3, max: 1e3, noNaN: true }), (values, scale) => {
      const scaled = values.map((value) => value * scale);
      assert.ok(close(balancedness(scaled), balancedness(values)));
      assert.ok(close(coefficientOfVariation(scaled), coefficientOfVariation(values)));
    }),
  );
});

Deno.test("balancedness() is 1/n when one member carries everything; 1 when all idle", () => {
  assert.equal(balancedness([0, 0, 8, 0]), 0.25);
  assert.equal(balancedness([0, 0, 0]), 1);
  assert.equal(balancedness([]), 1);
  assert.equal(balancedness([2, 4]), 0.75);
  assert.equal(coefficientOfVariation([2, 4]), 1 / 3);
  assert.equal(coefficientOfVariation([]), 0);
});

Deno.test("balancedness() rejects negative and non-finite loads naming the index", () => {
  assert.throws(() => balancedness([1, -1]), /load 1 must be a finite number >= 0, got -1/);
  assert.throws(() => coefficientOfVariation([Number.NaN]), RangeError);
  assert.throws(() => balancedness([Infinity]), RangeError);
});
