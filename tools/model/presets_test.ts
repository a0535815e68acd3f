/** @module Tests of the generator presets: the bench model's bestsellers come from its own gate. */
import assert from "node:assert/strict";
import { generateModel } from "./generate.ts";
import { BENCH_PRESET, modelPreset } from "./presets.ts";
import { createRandom } from "./prng.ts";
import { loadReferenceModel, type ReferenceModel } from "./reference.ts";
import { withTempDir } from "./test_helpers.ts";
import { demoTokens, type DemoTraffic, loadDemoTraffic } from "./traffic.ts";

/**
 * Selections per expert, `[layer][expert]`, of `tokens` demo tokens whose request types
 * follow Zipf(1) ranked from type `first` (the default mix ranks from 0; `--mix shift`
 * rotates the ranking).
 */
function expertLoads(
  model: ReferenceModel,
  traffic: DemoTraffic,
  options: { first: number; tokens: number; seed: number },
): Float64Array[] {
  const { manifest } = model;
  const types = traffic.request_types;
  const weight = (t: number) => 1 / (((t - options.first + types.length) % types.length) + 1);
  const total = types.reduce((sum, _, t) => sum + weight(t), 0);
  const loads = Array.from({ length: manifest.layers }, () => new Float64Array(manifest.experts));
  const random = createRandom(options.seed);
  types.forEach((type, t) => {
    const rows = Math.round(options.tokens * weight(t) / total);
    const { expertIds } = model.forward(demoTokens(traffic, type, rows, random), rows);
    const perLayer = rows * manifest.top_k;
    for (let layer = 0; layer < manifest.layers; layer++) {
      for (let i = 0; i < perLayer; i++) loads[layer]![expertIds[layer * perLayer + i]!]!++;
    }
  });
  return loads;
}

/** The `count` most loaded experts (ascending ids) and their mean load ÷ the others' mean. */
function bestsellers(load: Float64Array, count: number): { top: number[]; ratio: number } {
  const order = [...load.keys()].sort((a, b) => load[b]! - load[a]! || a - b);
  const mean = (experts: number[]) => experts.reduce((s, e) => s + load[e]!, 0) / experts.length;
  const top = order.slice(0, count);
  return { top: top.toSorted((a, b) => a - b), ratio: mean(top) / mean(order.slice(count)) };
}

Deno.test("the bench preset's own gate makes 8 bestsellers per layer, and a mix shift moves them", async () => {
  // Measured (seed 42, these 300 tokens): top 8 ÷ rest 13.4, 13.0, 13.2 (layers 0–2) with
  // the mix ranked from type 0, 12.7, 12.0, 11.7 ranked from type 1; the top 8 are 8 of the
  // first-ranked type's 9 preferred experts, and the shift keeps none of them.
  await withTempDir(async (dir) => {
    const manifest = await generateModel(dir, BENCH_PRESET);
    assert.equal(manifest.experts, 256);
    assert.equal(manifest.top_k, 8);
    const traffic = (await loadDemoTraffic(dir))!;
    const model = await loadReferenceModel(dir);
    const mixes = [0, 1].map((first) => {
      const loads = expertLoads(model, traffic, { first, tokens: 300, seed: 5 });
      return loads.map((load) => bestsellers(load, 8));
    });
    for (const [first, layers] of mixes.entries()) {
      layers.forEach(({ top, ratio }, layer) => {
        const where = `mix ranked from type ${first}, layer ${layer}`;
        assert.ok(ratio >= 5, `${where}: top 8 carry ${ratio.toFixed(1)}× the others' mean`);
        const preferred = new Set(traffic.preferred_experts[layer]![first]);
        const hot = top.filter((expert) => preferred.has(expert)).length;
        assert.ok(hot >= 6, `${where}: ${hot} of the top 8 are the first type's experts`);
      });
    }
    for (let layer = 0; layer < manifest.layers; layer++) {
      const before = new Set(mixes[0]![layer]!.top);
      const kept = mixes[1]![layer]!.top.filter((expert) => before.has(expert));
      assert.ok(kept.length <= 1, `layer ${layer}: the shift kept ${kept} among the top 8`);
    }
  });
});

Deno.test("modelPreset() knows demo and bench and names them when asked for another", () => {
  assert.deepEqual(modelPreset("demo").options, {});
  assert.equal(modelPreset("bench").options, BENCH_PRESET);
  assert.throws(
    () => modelPreset("toString"),
    /Cannot parse --preset: "toString" is not one of demo, bench/,
  );
});
