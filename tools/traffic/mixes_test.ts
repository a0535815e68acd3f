import assert from "node:assert/strict";
import { createRandom } from "../model/prng.ts";
import { mixAt, mixSampler, rankedFrom, SPIKE_FACTOR } from "./mixes.ts";

const TYPES = ["chat", "code", "math", "translate"];

function shares(sample: () => string, n = 20_000): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const type = sample();
    counts[type] = (counts[type] ?? 0) + 1 / n;
  }
  return counts;
}

Deno.test("mixAt(): steady is even, skewed favours the first type, both at the base rate", () => {
  const steady = mixAt("steady", 10, { types: 4, durationS: 60 });
  assert.deepEqual([steady.rateFactor, steady.zipf], [1, 0]);
  const skewed = mixAt("skewed", 10, { types: 4, durationS: 60 });
  assert.deepEqual([skewed.rateFactor, skewed.first], [1, 0]);
  assert.ok(skewed.zipf > 1);
});

Deno.test("mixAt(): shift rotates the leading type every period, a quarter of the run by default", () => {
  const firsts = [0, 14, 15, 29, 30, 45, 59].map((t) =>
    mixAt("shift", t, { types: 4, durationS: 60 }).first
  );
  assert.deepEqual(firsts, [0, 0, 1, 1, 2, 3, 3]);
  assert.equal(mixAt("shift", 50, { types: 4, durationS: 600, shiftEveryS: 10 }).first, 1);
  assert.equal(mixAt("shift", 50, { types: 4, durationS: 600, shiftEveryS: 10 }).label, "shift 6");
});

Deno.test("mixAt(): spike is 5× with its own mix for the middle fifth of the run only", () => {
  const at = (t: number) => mixAt("spike", t, { types: 4, durationS: 100 });
  assert.deepEqual(
    [at(39.9).rateFactor, at(40).rateFactor, at(59.9).rateFactor, at(60).rateFactor],
    [
      1,
      SPIKE_FACTOR,
      SPIKE_FACTOR,
      1,
    ],
  );
  assert.equal(at(50).first, 3, "the burst is led by the last type");
  assert.equal(at(10).zipf, 0);
});

Deno.test("mixSampler() draws types with the scenario's shares", () => {
  const random = createRandom(3);
  const skewed = mixSampler("skewed", TYPES, { durationS: 60, random });
  const got = shares(() => skewed(5).type);
  // Zipf 1.5 over 4 types: 1, 0.354, 0.192, 0.125 normalised.
  assert.ok(Math.abs(got["chat"]! - 0.598) < 0.02, `chat ${got["chat"]}`);
  assert.ok(got["code"]! > got["math"]! && got["math"]! > got["translate"]!);
  const spike = mixSampler("spike", TYPES, { durationS: 60, random });
  assert.ok(shares(() => spike(30).type)["translate"]! > 0.5, "the spike's own mix");
  assert.ok(Math.abs(shares(() => spike(5).type)["chat"]! - 0.25) < 0.02, "even outside it");
});

Deno.test("rankedFrom() wraps around", () => {
  assert.deepEqual(rankedFrom(TYPES, 2), ["math", "translate", "chat", "code"]);
});
