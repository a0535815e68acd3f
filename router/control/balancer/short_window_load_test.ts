import assert from "node:assert/strict";
import type { PoolLoad } from "../load/pool_load.ts";
import { ShortWindowLoad } from "./short_window_load.ts";

function round(at: number, vector: number[]): PoolLoad {
  return {
    at,
    backends: [],
    models: [{
      model: "m",
      layers: [{
        layer: 0,
        expertTokensPerS: vector,
        balancedness: 1,
        expertSkew: { top10Share: 0, cv: 0 },
      }],
    }],
    pool: { reporting: 1, balancedness: 1, utilisationBalancedness: 1, utilisationCv: 0 },
  };
}

Deno.test("ShortWindowLoad follows a step within a few time constants", () => {
  const window = new ShortWindowLoad(5_000);
  assert.equal(window.load("m"), null);
  window.record(round(0, [10, 10]));
  assert.deepEqual(window.load("m"), [[10, 10]]);
  // A step to [0, 20]: after one τ 63 % of the way, after three τ 95 %.
  for (let t = 1_000; t <= 5_000; t += 1_000) window.record(round(t, [0, 20]));
  const afterOne = window.load("m")![0]!;
  assert.ok(Math.abs(afterOne[0]! - 10 * Math.exp(-1)) < 1e-9, `${afterOne}`);
  for (let t = 6_000; t <= 15_000; t += 1_000) window.record(round(t, [0, 20]));
  assert.ok(window.load("m")![0]![0]! < 10 * 0.051);
  // A missed round weighs in proportion to its gap; a repeated time changes nothing.
  const before = window.load("m");
  window.record(round(15_000, [1000, 1000]));
  assert.deepEqual(window.load("m"), before);
});
