import assert from "node:assert/strict";
import fc from "fast-check";
import { replacementAdvice } from "./replacement_advice.ts";

const preview = (before: number | null, after: number, moved: number) => ({
  model: "m",
  current: { version: 3, balancedness: before },
  proposed: { phy2log: [[0, 1, 2, 0]], slotsPerBackend: 2, balancedness: after },
  moved,
});

Deno.test("a hot expert's better placement is recommended with its cost", () => {
  const advice = replacementAdvice({
    preview: preview(0.55, 0.92, 3),
    expertBytes: 2 * 2 ** 20,
    threshold: 0.75,
  });
  assert.equal(advice.recommended, true);
  assert.equal(advice.apply, "live");
  assert.equal(advice.details["replicas_moved"], 3);
  assert.equal(advice.details["bytes_to_move"], 6 * 2 ** 20);
  assert.match(advice.risk, /3 replica\(s\) to load and warm \(6\.0 MiB\)/);
  assert.match(advice.expectedEffect, /0\.550 → 0\.920/);
});

Deno.test("a flat load (no gain) recommends nothing", () => {
  const advice = replacementAdvice({
    preview: preview(0.97, 0.98, 1),
    expertBytes: 1,
    threshold: 0.75,
  });
  assert.equal(advice.recommended, false);
  assert.equal(advice.apply, "none");
  assert.equal(
    advice.expectedEffect,
    "no change: the gain +0.010 is below 0.05; the worst layer 0.970 is at or above the threshold 0.75",
  );
});

Deno.test("without a preview the advice says why", () => {
  const advice = replacementAdvice({
    preview: undefined,
    reason: "no expert load observed yet",
    expertBytes: 1,
    threshold: 0.75,
  });
  assert.equal(advice.recommended, false);
  assert.deepEqual(advice.evidence, ["no expert load observed yet"]);
});

Deno.test("replacement advice: the verdict and its text agree with its numbers (all inputs)", () => {
  const unit = fc.double({ min: 0, max: 1, noNaN: true });
  fc.assert(fc.property(
    fc.option(unit, { nil: null }),
    unit,
    fc.integer({ min: 0, max: 20 }),
    fc.double({ min: 0.1, max: 1, noNaN: true }),
    (before, after, moved, threshold) => {
      const advice = replacementAdvice({
        preview: {
          model: "m",
          current: { version: 1, balancedness: before, worstLayer: before },
          proposed: { phy2log: [[0]], slotsPerBackend: 1, balancedness: after, worstLayer: after },
          moved,
        },
        expertBytes: 1,
        threshold,
      });
      const gain = before === null ? after : after - before;
      const should = moved > 0 && gain >= 0.05 && (before === null || before < threshold);
      assert.equal(advice.recommended, should);
      assert.equal(advice.apply, should ? "live" : "none");
      if (should) {
        assert.match(advice.expectedEffect, /→/);
      } else {
        // Each stated reason holds.
        if (/no replica would move/.test(advice.expectedEffect)) assert.equal(moved, 0);
        if (/is below 0\.05/.test(advice.expectedEffect)) assert.ok(gain < 0.05);
        if (/at or above the threshold/.test(advice.expectedEffect)) {
          assert.ok(before !== null && before >= threshold);
        }
      }
      assert.equal(advice.details["balancedness_before"], before);
      assert.equal(advice.details["balancedness_after"], after);
    },
  ));
});
