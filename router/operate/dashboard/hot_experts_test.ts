import assert from "node:assert/strict";
import { hotExperts } from "./static/page_model.js";
import { labelStep } from "./static/heat_scale.js";

const LOAD = {
  models: [{
    model: "m",
    layers: [
      { layer: 0, expert_tokens_s: [1, 9, 0, 2] },
      { layer: 1, expert_tokens_s: [5, 0, 0, 5] },
    ],
  }],
  backends: [],
};
const PLAN = {
  layers: [
    { layer: 0, hosted: [{ backend: "b1", experts: [0, 1] }, { backend: "b2", experts: [1, 3] }] },
    { layer: 1, hosted: [{ backend: "b1", experts: [0, 3] }] },
  ],
};

Deno.test("hotExperts() ranks (layer, expert) by tokens/s with share and hosting backends", () => {
  assert.deepEqual(hotExperts(LOAD, PLAN, "m", 3), [
    { layer: 0, expert: 1, tokensS: 9, share: 0.75, backends: ["b1", "b2"], replicas: 2 },
    { layer: 1, expert: 0, tokensS: 5, share: 0.5, backends: ["b1"], replicas: 1 },
    { layer: 1, expert: 3, tokensS: 5, share: 0.5, backends: ["b1"], replicas: 1 },
  ]);
  assert.deepEqual(hotExperts(LOAD, null, "m", 1)[0]?.backends, [], "no plan, no rates: none");
  assert.deepEqual(hotExperts({ models: [] }, PLAN, "m"), []);
});

Deno.test("labelStep() thins labels by powers of two until they keep their distance", () => {
  assert.equal(labelStep(32, 1200, 28), 1);
  assert.equal(labelStep(256, 1200, 28), 8);
  assert.equal(labelStep(256, 640, 14), 8);
  assert.equal(labelStep(61, 660, 13), 2);
});
