/** @module Tests of demo traffic: typed tokens, gaussian fallback, Zipf request types. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createRandom } from "./prng.ts";
import { withTempDir } from "./test_helpers.ts";
import {
  DEMO_TRAFFIC_FILE,
  demoTokens,
  type DemoTraffic,
  gaussianTokens,
  loadDemoTraffic,
  zipfRequestTypes,
} from "./traffic.ts";

const traffic: DemoTraffic = {
  request_types: ["chat", "code"],
  directions: [[1, 0, 0, 0], [0, 0.6, 0.8, 0]],
  signal: 3,
  noise: 0.5,
  preferred_experts: [],
};

Deno.test("demoTokens() centres rows on signal times the type direction", () => {
  const rows = 4000;
  const tokens = demoTokens(traffic, "code", rows, createRandom(1));
  assert.equal(tokens.length, rows * 4);
  const mean = [0, 1, 2, 3].map((c) => {
    let sum = 0;
    for (let row = 0; row < rows; row++) sum += tokens[row * 4 + c]!;
    return sum / rows;
  });
  [0, 1.8, 2.4, 0].forEach((expected, c) => {
    assert(Math.abs(mean[c]! - expected) < 0.05, `component ${c}: ${mean[c]}`);
  });
  let variance = 0;
  for (let row = 0; row < rows; row++) variance += (tokens[row * 4 + 3]! - mean[3]!) ** 2;
  assert(Math.abs(Math.sqrt(variance / rows) - 0.5) < 0.03);
});

Deno.test("demoTokens() names the known types when the type is unknown", () => {
  assert.throws(
    () => demoTokens(traffic, "poetry", 1, createRandom(1)),
    /Cannot make demo tokens: unknown request type "poetry" \(known: chat, code\)/,
  );
});

Deno.test("gaussianTokens() gives [rows, dModel] standard-normal values", () => {
  const tokens = gaussianTokens(8, 1000, createRandom(2));
  assert.equal(tokens.length, 8000);
  const mean = tokens.reduce((a, b) => a + b, 0) / tokens.length;
  assert(Math.abs(mean) < 0.05);
});

Deno.test("zipfRequestTypes() draws types with weights 1 / rank^s", () => {
  const draw = zipfRequestTypes(["a", "b", "c"], 1, createRandom(3));
  const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
  const draws = 30000;
  for (let i = 0; i < draws; i++) counts[draw()]!++;
  const total = 1 + 1 / 2 + 1 / 3;
  for (const [type, weight] of [["a", 1], ["b", 1 / 2], ["c", 1 / 3]] as const) {
    assert(Math.abs(counts[type]! / draws - weight / total) < 0.015, `${type}: ${counts[type]}`);
  }
  const uniform = zipfRequestTypes(["x", "y"], 0, () => 0.75);
  assert.equal(uniform(), "y");
});

Deno.test("zipfRequestTypes() rejects an empty list and a bad exponent", () => {
  assert.throws(() => zipfRequestTypes([], 1, Math.random), /the list is empty/);
  assert.throws(() => zipfRequestTypes(["a"], -1, Math.random), /Zipf exponent must be/);
  assert.throws(() => zipfRequestTypes(["a"], NaN, Math.random), /Zipf exponent must be/);
});

Deno.test("loadDemoTraffic() returns undefined without a file and validates one", async () => {
  await withTempDir(async (dir) => {
    assert.equal(await loadDemoTraffic(dir), undefined);
    await Deno.writeTextFile(join(dir, DEMO_TRAFFIC_FILE), JSON.stringify(traffic));
    assert.deepEqual(await loadDemoTraffic(dir), traffic);
    await Deno.writeTextFile(
      join(dir, DEMO_TRAFFIC_FILE),
      JSON.stringify({ ...traffic, directions: [[1, 0]] }),
    );
    await assert.rejects(loadDemoTraffic(dir), /Cannot load demo traffic .*directions/);
  });
});
