import assert from "node:assert/strict";
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
  assert.match(advice.expectedEffect, /at or above the threshold 0\.75/);
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
