/** @module Tests of gathering expert input rows and scatter-adding weighted outputs. */
import assert from "node:assert/strict";
import { gatherRows, scatterAddWeighted } from "./combine.ts";
import { groupRowsByExpert, routeTokens } from "./routing.ts";

Deno.test("gatherRows() copies the chosen rows in order", () => {
  const source = Float32Array.from([0, 1, 10, 11, 20, 21]);
  assert.deepEqual([...gatherRows(source, 2, Int32Array.from([2, 0]))], [20, 21, 0, 1]);
  assert.throws(() => gatherRows(source, 2, Int32Array.from([3])), RangeError);
});

Deno.test("scatterAddWeighted() adds each output row times its routing weight", () => {
  const assignment = { rows: Int32Array.from([0, 2]), positions: Int32Array.from([1, 4]) };
  const weights = Float32Array.from([0, 0.25, 0, 0, 0.5, 0]);
  const target = Float32Array.from([1, 1, 1, 1, 1, 1]);
  scatterAddWeighted(target, 2, Float32Array.from([4, 8, 2, -2]), assignment, weights);
  assert.deepEqual([...target], [2, 3, 1, 1, 2, 0]);
});

Deno.test("gather, expert and scatter reproduce the per-token weighted sum", () => {
  // Expert e multiplies its input by (e + 1); the layer output of a token is then
  // Σ_k w_k · (e_k + 1) · x.
  const rows = 3;
  const width = 2;
  const input = Float32Array.from([1, 2, 3, 4, 5, 6]);
  const logits = Float32Array.from([0, 1, 2, 3, /**/ 3, 2, 1, 0, /**/ 1, 3, 0, 2]);
  const routing = routeTokens(logits, rows, 4, {
    topK: 2,
    groups: 1,
    topkGroup: 1,
    temperature: 1,
  });
  const output = new Float64Array(rows * width);
  groupRowsByExpert(routing, rows, 2, 4).forEach((assignment, expert) => {
    const values = gatherRows(input, width, assignment.rows).map((v) => v * (expert + 1));
    scatterAddWeighted(output, width, values, assignment, routing.weights);
  });
  for (let row = 0; row < rows; row++) {
    let factor = 0;
    for (let k = 0; k < 2; k++) {
      factor += routing.weights[row * 2 + k]! * (routing.experts[row * 2 + k]! + 1);
    }
    for (let c = 0; c < width; c++) {
      const expected = factor * input[row * width + c]!;
      assert.deepEqual(Math.abs(output[row * width + c]! - expected) < 1e-6, true);
    }
  }
});
