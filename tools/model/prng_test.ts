/** @module Tests of the seeded generators behind model generation. */
import assert from "node:assert/strict";
import { createGaussian, createRandom, deriveSeed, gaussianArray } from "./prng.ts";

Deno.test("createRandom() repeats its sequence for a seed and stays in [0, 1)", () => {
  const a = createRandom(42);
  const b = createRandom(42);
  const values = Array.from({ length: 1000 }, () => a());
  assert.deepEqual(values, Array.from({ length: 1000 }, () => b()));
  assert(values.every((v) => v >= 0 && v < 1));
  assert.notDeepEqual(values.slice(0, 5), Array.from({ length: 5 }, createRandom(43)));
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  assert(Math.abs(mean - 0.5) < 0.05, `mean ${mean}`);
});

Deno.test("createGaussian() has mean 0 and variance 1", () => {
  const values = gaussianArray(createGaussian(createRandom(1)), 20000);
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length;
  assert(Math.abs(mean) < 0.03, `mean ${mean}`);
  assert(Math.abs(variance - 1) < 0.05, `variance ${variance}`);
  assert(values.every(Number.isFinite));
});

Deno.test("deriveSeed() gives distinct, stable seeds per label path", () => {
  assert.equal(deriveSeed(42, 1, 2), deriveSeed(42, 1, 2));
  const seeds = new Set<number>();
  for (let a = 0; a < 10; a++) {
    for (let b = 0; b < 10; b++) seeds.add(deriveSeed(42, a, b));
  }
  seeds.add(deriveSeed(42, 1));
  seeds.add(deriveSeed(43, 1, 2));
  assert.equal(seeds.size, 102);
});
