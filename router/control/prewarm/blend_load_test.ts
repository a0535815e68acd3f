import assert from "node:assert/strict";
import { blendLoads } from "./blend_load.ts";

Deno.test("blendLoads() takes the larger of observed and predicted per expert", () => {
  assert.deepEqual(
    blendLoads([[1, 5, 0], [2, 2, 2]], [[3, 1, 0], [0, 4, 1]]),
    [[3, 5, 0], [2, 4, 2]],
  );
});

Deno.test("blendLoads() without an observation is the prediction; on a shape change the observation", () => {
  const predicted = [[1, 2]];
  const copy = blendLoads(null, predicted);
  assert.deepEqual(copy, [[1, 2]]);
  copy[0]![0] = 9;
  assert.equal(predicted[0]![0], 1, "a copy, not the caller's rows");
  assert.deepEqual(blendLoads([[1, 1], [1, 1]], predicted), [[1, 1], [1, 1]]);
  assert.deepEqual(blendLoads([[1, 1, 1]], predicted), [[1, 1, 1]]);
});
