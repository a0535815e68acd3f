import assert from "node:assert/strict";
import { chooseStep, measuredLayerBalance, stepBalance } from "./step_choice.ts";

// Two backends, one layer: a hosts 0, 1, 2 (2 replicated), b hosts 2, 3.
const layers = [{
  hosted: [{ backend: "a", experts: [0, 1, 2] }, { backend: "b", experts: [2, 3] }],
}];

Deno.test("stepBalance splits a replicated expert's load equally over its hosts", () => {
  // Hot 0 and 1: a carries 2, b 0 → mean 1 ÷ max 2.
  assert.deepEqual(stepBalance(layers, [[0, 1]]), [0.5]);
  // Hot 1 and 2: a 1.5, b 0.5 → 1 ÷ 1.5.
  assert.equal(stepBalance(layers, [[1, 2]])[0]!.toFixed(4), (1 / 1.5).toFixed(4));
  // Hot 1 and 3: one each → 1.
  assert.deepEqual(stepBalance(layers, [[1, 3]]), [1]);
});

Deno.test("chooseStep picks the type whose experts the plan spreads worst", () => {
  const choice = chooseStep(layers, ["even", "skewed", "half"], [[[1, 3], [0, 1], [1, 2]]]);
  assert.equal(choice?.type, "skewed");
  assert.equal(choice?.predictedWorst, 0.5);
  assert.deepEqual(choice?.scores.map((s) => s.type), ["even", "skewed", "half"]);
});

Deno.test("chooseStep scores a type by its worst layer", () => {
  const two = [layers[0]!, layers[0]!];
  // "x" is even in layer 0 but all on a in layer 1; "y" is 1.5 : 0.5 in both.
  const choice = chooseStep(two, ["x", "y"], [[[1, 3], [1, 2]], [[0, 1], [1, 2]]]);
  assert.equal(choice?.type, "x");
});

Deno.test("chooseStep answers null without preferred experts", () => {
  assert.equal(chooseStep(layers, ["a"], []), null);
});

Deno.test("measuredLayerBalance: mean ÷ max of each fresh backend's layer tokens/s", () => {
  const perLayer = measuredLayerBalance([
    {
      stale: false,
      layers: [{ layer: 0, expert_tokens_s: [30, 10] }, { layer: 1, expert_tokens_s: [5] }],
    },
    {
      stale: false,
      layers: [{ layer: 0, expert_tokens_s: [0, 20] }, { layer: 1, expert_tokens_s: [15] }],
    },
    { stale: true, layers: [{ layer: 0, expert_tokens_s: [999] }] },
  ]);
  // Layer 0: 40 vs 20 → 30/40; layer 1: 5 vs 15 → 10/15.
  assert.equal(perLayer?.length, 2);
  assert.equal(perLayer![0], 0.75);
  assert.equal(perLayer![1]!.toFixed(4), (10 / 15).toFixed(4));
});

Deno.test("measuredLayerBalance is null when nothing ran or nothing is fresh", () => {
  assert.equal(measuredLayerBalance([{ stale: true, layers: [] }]), null);
  assert.equal(
    measuredLayerBalance([{ stale: false, layers: [{ layer: 0, expert_tokens_s: [0, 0] }] }]),
    null,
  );
});

Deno.test("chooseStep breaks a worst-layer tie by the mean over layers", () => {
  const two = [layers[0]!, layers[0]!];
  // Both reach 0.5 in some layer; "both" also unbalances layer 1 (0.667 vs 1).
  const choice = chooseStep(two, ["one", "both"], [[[0, 1], [0, 1]], [[1, 3], [1, 2]]]);
  assert.equal(choice?.type, "both");
});
