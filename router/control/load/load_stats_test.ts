import assert from "node:assert/strict";
import fc from "fast-check";
import { concentration, shares, topShare } from "./load_stats.ts";

Deno.test("topShare() is the share of the hottest ceil(10 %) members", () => {
  // 20 members → the top 2: 50 + 30 of 100.
  const values = [50, 30, ...Array.from({ length: 18 }, () => 20 / 18)];
  assert.ok(Math.abs(topShare(values) - 0.8) < 1e-12);
  assert.equal(topShare(Array.from({ length: 10 }, () => 1)), 0.1);
  assert.equal(topShare([0, 0, 0]), 0);
  assert.equal(topShare([3, 1], 0.5), 0.75);
  assert.throws(() => topShare([1], 0), /fraction must be in \(0, 1\]/);
});

Deno.test("concentration() is 0 for an even spread and 1 for a single member", () => {
  assert.equal(concentration([5, 5, 5, 5]), 0);
  assert.equal(concentration([0, 9, 0, 0]), 1);
  // Two of four equally: H = ln 2, so 1 − ln2/ln4 = 0.5.
  assert.ok(Math.abs(concentration([1, 1, 0, 0]) - 0.5) < 1e-12);
  assert.equal(concentration([]), 0);
  assert.throws(() => concentration([1, -1]), /finite and >= 0/);
});

Deno.test("concentration() and topShare() stay in [0, 1] and shares sum to 1", () => {
  fc.assert(fc.property(
    fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 64 }),
    (values) => {
      const c = concentration(values);
      const t = topShare(values);
      assert.ok(c >= 0 && c <= 1);
      assert.ok(t >= 0 && t <= 1 + 1e-12);
      const sum = shares(values).reduce((a, b) => a + b, 0);
      assert.ok(sum === 0 || Math.abs(sum - 1) < 1e-9);
    },
  ));
});
