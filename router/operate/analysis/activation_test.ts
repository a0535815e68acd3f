/** @module Expert activation over time: series, totals and the top-N hot experts. */
import assert from "node:assert/strict";
import { layerActivation } from "./activation.ts";

Deno.test("layerActivation() ranks the hottest experts over the range with their series", () => {
  const vectors = [[1, 5, 0, 2], [3, 5, 0], [], [1, 0, 0, 4]];
  const a = layerActivation(1, vectors, { experts: 4, top: 2 });
  assert.equal(a.layer, 1);
  assert.deepEqual(a.series, [[1, 3, 0, 1], [5, 5, 0, 0], [0, 0, 0, 0], [2, 0, 0, 4]]);
  assert.deepEqual(a.expertTotals, [5, 10, 0, 6]);
  assert.deepEqual(a.totals, [8, 8, 0, 5]);
  assert.deepEqual(a.top, [
    { expert: 1, total: 10, share: 10 / 21, series: [5, 5, 0, 0] },
    { expert: 3, total: 6, share: 6 / 21, series: [2, 0, 0, 4] },
  ]);
});

Deno.test("layerActivation() lists only experts that carried load, ties to the lower id", () => {
  const a = layerActivation(0, [[2, 0, 2]], { top: 5 });
  assert.deepEqual(a.top.map((h) => h.expert), [0, 2]);
  assert.deepEqual(layerActivation(0, [[0, 0]], { top: 3 }).top, []);
  assert.throws(() => layerActivation(0, [], { top: 0 }), /top must be an integer >= 1/);
});
