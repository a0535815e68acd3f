import assert from "node:assert/strict";
import { createRandom } from "../../tools/model/prng.ts";
import { routeTokens } from "./routing.ts";
import { fitRoutingBias, selectionCounts } from "./routing_bias.ts";

const gate = { topK: 2, groups: 1, topkGroup: 1, temperature: 1 };

/** Logits where experts 0 and 1 are favoured by a margin on every token. */
function skewedLogits(rows: number, experts: number): Float32Array {
  const random = createRandom(5);
  const logits = new Float32Array(rows * experts);
  for (let i = 0; i < logits.length; i++) {
    const expert = i % experts;
    logits[i] = random() + (expert < 2 ? 0.6 : 0);
  }
  return logits;
}

Deno.test("a routing bias changes the choice but the weights stay the unbiased softmax", () => {
  const logits = new Float32Array([3, 2, 1, 0]);
  const plain = routeTokens(logits, 1, 4, gate);
  assert.deepEqual([...plain.experts], [0, 1]);
  const biased = routeTokens(logits, 1, 4, { ...gate, bias: new Float32Array([0, 0, 0, 5]) });
  assert.deepEqual([...biased.experts], [3, 0]);
  // Weights from the raw logits of experts 3 and 0: softmax(0, 3).
  const e = Math.exp(-3);
  assert.ok(Math.abs(biased.weights[0]! - e / (1 + e)) < 1e-6);
  assert.ok(Math.abs(biased.weights[1]! - 1 / (1 + e)) < 1e-6);
  assert.throws(
    () => routeTokens(logits, 1, 4, { ...gate, bias: new Float32Array(3) }),
    /bias length 3 is not experts = 4/,
  );
});

Deno.test("fitRoutingBias() evens out a skewed gate", () => {
  const rows = 256;
  const experts = 8;
  const logits = skewedLogits(rows, experts);
  const fitted = fitRoutingBias(logits, rows, experts, gate);
  assert.ok(fitted.balancednessBefore < 0.6, `before ${fitted.balancednessBefore}`);
  assert.ok(fitted.balancednessAfter > 0.85, `after ${fitted.balancednessAfter}`);
  const counts = selectionCounts(logits, rows, experts, { ...gate, bias: fitted.bias });
  assert.equal(counts.reduce((a, b) => a + b, 0), rows * 2);
  // The favoured experts got a negative bias, the others a positive one.
  assert.ok(fitted.bias[0]! < 0 && fitted.bias[1]! < 0);
  assert.ok(fitted.bias.slice(2).every((b) => b > 0));
});

Deno.test("fitRoutingBias() keeps a zero bias when the gate is already even", () => {
  const rows = 8;
  const experts = 4;
  // Token r prefers experts r mod 4 and r+1 mod 4: every expert gets 4 selections.
  const logits = new Float32Array(rows * experts);
  for (let r = 0; r < rows; r++) {
    logits[r * experts + (r % 4)] = 2;
    logits[r * experts + ((r + 1) % 4)] = 1;
  }
  const fitted = fitRoutingBias(logits, rows, experts, gate);
  assert.equal(fitted.balancednessBefore, 1);
  assert.deepEqual([...fitted.bias], [0, 0, 0, 0]);
});
