import assert from "node:assert/strict";
import { biasAdvice, type BiasEvaluation, temperatureAdvice } from "./gate_advice.ts";

const evaluation = (after: number, deviation: number): BiasEvaluation => ({
  backend: "backend-1",
  rows: 256,
  layers: [
    { layer: 0, balancednessBefore: 0.5, balancednessAfter: after, bias: [0.1, -0.1] },
    { layer: 1, balancednessBefore: 0.6, balancednessAfter: after, bias: [0, 0] },
  ],
  outputRelativeL2: deviation,
  outputMaxAbs: deviation * 2,
  selectionChanged: 0.1,
});

Deno.test("temperature advice never recommends: it cannot change which experts run", () => {
  const advice = temperatureAdvice(1.5);
  assert.equal(advice.recommended, false);
  assert.match(advice.expectedEffect, /never which experts are chosen/);
});

Deno.test("a bias is recommended only with a real gain inside the deviation budget", () => {
  const good = biasAdvice(evaluation(0.9, 0.02), 0.05);
  assert.equal(good.recommended, true);
  assert.equal(good.apply, "live");
  assert.deepEqual(good.details["bias"], [[0.1, -0.1], [0, 0]]);

  const tooFar = biasAdvice(evaluation(0.9, 0.2), 0.05);
  assert.equal(tooFar.recommended, false);
  assert.match(tooFar.expectedEffect, /exceeds the budget 0\.05/);

  const noGain = biasAdvice(evaluation(0.56, 0.001), 0.05);
  assert.equal(noGain.recommended, false);
  assert.match(noGain.expectedEffect, /below 0\.05/);

  const none = biasAdvice({ error: "no recorded inputs yet" }, 0.05);
  assert.equal(none.recommended, false);
  assert.deepEqual(none.evidence, ["no recorded inputs yet"]);
});
