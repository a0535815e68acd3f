/** @module Request type × expert correlation on synthetic counts with known answers. */
import assert from "node:assert/strict";
import { correlate } from "./correlation.ts";

Deno.test("correlate() gives a type that only uses expert 3 share 1 and concentration 1", () => {
  const [only3] = correlate({ code: [[0, 0, 0, 40, 0, 0, 0, 0]] });
  assert.equal(only3!.requestType, "code");
  assert.equal(only3!.selections, 40);
  assert.deepEqual(only3!.layers[0]!.shares, [0, 0, 0, 1, 0, 0, 0, 0]);
  assert.equal(only3!.layers[0]!.concentration, 1);
  assert.equal(only3!.layers[0]!.topExpert, 3);
  assert.equal(only3!.concentration, 1);
});

Deno.test("correlate() gives a uniform type concentration 0 and equal shares", () => {
  const [uniform] = correlate({ chat: [[5, 5, 5, 5], [2, 2, 2, 2]] });
  for (const layer of uniform!.layers) {
    assert.deepEqual(layer.shares, [0.25, 0.25, 0.25, 0.25]);
    assert.ok(Math.abs(layer.concentration!) < 1e-12, `concentration ${layer.concentration}`);
  }
  assert.ok(Math.abs(uniform!.concentration!) < 1e-12);
});

Deno.test("correlate() pads to the model's shape and skips idle layers in the mean", () => {
  const types = correlate({ math: [[0, 6]], chat: [[1, 1, 1, 1]] }, { layers: 2, experts: 4 });
  assert.deepEqual(types.map((t) => t.requestType), ["chat", "math"]);
  const math = types[1]!;
  assert.deepEqual(math.layers[0]!.shares, [0, 1, 0, 0]);
  // Layer 1 has no selections: null concentration, all-zero shares, no top expert.
  assert.deepEqual(math.layers[1], {
    layer: 1,
    selections: 0,
    shares: [0, 0, 0, 0],
    concentration: null,
    topExpert: null,
  });
  assert.equal(math.concentration, 1);
});

Deno.test("correlate() ranks a half-and-half type between even and single", () => {
  const [half] = correlate({ t: [[1, 1, 0, 0]] });
  // 1 − ln 2 / ln 4 = 0.5 exactly.
  assert.ok(Math.abs(half!.concentration! - 0.5) < 1e-12);
  for (const type of correlate({ a: [[3, 1, 7, 0, 2]], b: [[9, 9, 9, 9, 1]] })) {
    const sum = type.layers[0]!.shares.reduce((s, v) => s + v, 0);
    assert.ok(Math.abs(sum - 1) < 1e-12, `shares of ${type.requestType} sum to ${sum}`);
  }
});
