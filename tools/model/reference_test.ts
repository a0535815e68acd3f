/** @module Tests of the reference forward pass, including against ONNX Runtime end to end. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { gatherRows } from "../../gpu-backend/moe/combine.ts";
import { gateOptionsFor, groupRowsByExpert, routeTokens } from "../../gpu-backend/moe/routing.ts";
import { type ModelManifest, type ModelPart, modelPartPath } from "../../shared/model_manifest.ts";
import { generateModel } from "./generate.ts";
import { createRandom } from "./prng.ts";
import { loadReferenceModel } from "./reference.ts";
import { maxAbsDiff, runOnnx, TINY_MODEL, withTempDir } from "./test_helpers.ts";
import { gaussianTokens } from "./traffic.ts";

Deno.test("reference forward keeps the token shape and changes the tokens", async () => {
  await withTempDir(async (dir) => {
    await generateModel(dir, TINY_MODEL);
    const model = await loadReferenceModel(dir);
    const rows = 7;
    const tokens = gaussianTokens(16, rows, createRandom(1));
    const result = model.forward(tokens, rows);
    assert.equal(result.output.length, rows * 16);
    assert.equal(result.expertIds.length, 2 * rows * 2);
    assert.equal(result.expertWeights.length, 2 * rows * 2);
    assert(result.output.every(Number.isFinite));
    assert(maxAbsDiff(result.output, tokens) > 0.1, "layers should change the tokens");
    for (let i = 0; i < result.expertWeights.length; i += 2) {
      const sum = result.expertWeights[i]! + result.expertWeights[i + 1]!;
      assert(Math.abs(sum - 1) < 1e-6);
      const [a, b] = [result.expertIds[i]!, result.expertIds[i + 1]!];
      // topk_group 1 of 2 groups: both experts come from the same group of 4.
      assert.equal(Math.floor(a / 4), Math.floor(b / 4));
    }
    assert.equal(model.forward(new Float32Array(0), 0).output.length, 0);
    assert.throws(() => model.forward(tokens, rows + 1), /Cannot run reference forward/);
  });
});

Deno.test("reference temperature changes the combine weights, not the experts", async () => {
  await withTempDir(async (dir) => {
    await generateModel(dir, TINY_MODEL);
    const model = await loadReferenceModel(dir);
    const tokens = gaussianTokens(16, 5, createRandom(2));
    // Layer 0 sees the same input at every temperature, so its experts must match.
    const plain = model.forward(tokens, 5);
    const sharp = model.forward(tokens, 5, { temperature: 0.25 });
    assert.deepEqual(sharp.expertIds.subarray(0, 10), plain.expertIds.subarray(0, 10));
    for (let i = 0; i < 10; i += 2) {
      assert(sharp.expertWeights[i]! >= plain.expertWeights[i]!, "low temperature sharpens");
    }
    assert.notDeepEqual(sharp.output, plain.output);
  });
});

Deno.test("reference forward matches a forward pass built from ONNX Runtime parts", async () => {
  await withTempDir(async (dir) => {
    const manifest = await generateModel(dir, TINY_MODEL);
    const model = await loadReferenceModel(dir);
    const rows = 6;
    const tokens = gaussianTokens(16, rows, createRandom(3));
    const expected = model.forward(tokens, rows, { temperature: 0.8 });
    const actual = await onnxForward(dir, manifest, tokens, rows, 0.8);
    assert.deepEqual(actual.expertIds, expected.expertIds);
    const error = maxAbsDiff(actual.output, expected.output);
    assert(error <= 1e-4, `max abs error ${error}`);
  });
});

/** The MoE layer equation evaluated with ONNX Runtime for every part. */
async function onnxForward(
  dir: string,
  manifest: ModelManifest,
  tokens: Float32Array,
  rows: number,
  temperature: number,
): Promise<{ output: Float32Array; expertIds: Int32Array }> {
  const width = manifest.d_model;
  const run = async (part: ModelPart, x: Float32Array, n: number) =>
    await runOnnx(await Deno.readFile(join(dir, modelPartPath(manifest, part))), x, n);
  const ids: number[] = [];
  let hidden = tokens;
  for (let layer = 0; layer < manifest.layers; layer++) {
    const logits = await run({ kind: "gate", layer }, hidden, rows);
    const options = gateOptionsFor(manifest, temperature);
    const routing = routeTokens(logits, rows, manifest.experts, options);
    ids.push(...routing.experts);
    const next = Float64Array.from(hidden);
    const groups = groupRowsByExpert(routing, rows, manifest.top_k, manifest.experts);
    for (const [expert, group] of groups.entries()) {
      if (group.rows.length === 0) continue;
      const out = await run(
        { kind: "expert", layer, expert },
        gatherRows(hidden, width, group.rows),
        group.rows.length,
      );
      group.rows.forEach((row, i) => {
        const weight = routing.weights[group.positions[i]!]!;
        for (let c = 0; c < width; c++) next[row * width + c]! += weight * out[i * width + c]!;
      });
    }
    for (let expert = 0; expert < manifest.shared_experts; expert++) {
      const out = await run({ kind: "shared", layer, expert }, hidden, rows);
      out.forEach((value, i) => next[i]! += value);
    }
    hidden = Float32Array.from(next);
  }
  return { output: hidden, expertIds: Int32Array.from(ids) };
}
