import assert from "node:assert/strict";
import { balancedness } from "../../shared/balancedness.ts";
import { loadManifest } from "../server/start_backend.ts";
import { MoeEngine } from "../engine/engine.ts";
import { fitRoutingBias } from "../moe/routing_bias.ts";
import { gateOptionsFor } from "../moe/routing.ts";
import { createRandom } from "../../tools/model/prng.ts";
import { ReferenceExecutor } from "../../tools/model/reference_executor.ts";
import { demoTokens, loadDemoTraffic } from "../../tools/model/traffic.ts";
import { makeTinyModel, TINY } from "../../tests/_support/tiny_model.ts";
import { evaluateRoutingBias } from "./bias_evaluation.ts";

/** The tiny model, an engine over the reference executor, and skewed demo rows. */
async function setUp() {
  const dir = await makeTinyModel();
  const manifest = await loadManifest(dir);
  const executor = new ReferenceExecutor(dir, manifest);
  const runner = {
    run: async (...args: Parameters<ReferenceExecutor["execute"]>) =>
      (await executor.execute(...args)).output,
  };
  const engine = new MoeEngine({ manifest, runner, temperature: 1, maxQueuedRows: 1000 });
  const traffic = (await loadDemoTraffic(dir))!;
  const random = createRandom(11);
  // Mostly "chat": its preferred experts get most of the load.
  const parts = [demoTokens(traffic, "chat", 48, random), demoTokens(traffic, "code", 8, random)];
  const tokens = new Float32Array(56 * TINY.dModel);
  tokens.set(parts[0]!, 0);
  tokens.set(parts[1]!, parts[0]!.length);
  return { dir, manifest, engine, tokens, rows: 56 };
}

Deno.test("evaluateRoutingBias() balances the selections and measures the deviation", async () => {
  const { dir, manifest, engine, tokens, rows } = await setUp();
  try {
    const layer0Logits: Float32Array[] = [];
    const report = await evaluateRoutingBias({ tokens, rows }, {
      manifest,
      forward: (t, r, options) => {
        if (options.bias === undefined) {
          return engine.probe(t, r, {
            onGateLogits: (layer, logits) => {
              if (layer === 0) layer0Logits.push(logits.slice());
            },
          });
        }
        return engine.probe(t, r, options);
      },
    });
    assert.equal(report.rows, rows);
    assert.equal(report.layers.length, TINY.layers);
    // Step 1 alone shows the skew; it is what the unbiased model selects.
    const unbiased = await engine.infer(tokens.slice(), rows);
    for (const layer of report.layers) {
      const counts = new Array<number>(TINY.experts).fill(0);
      const ids = unbiased.expertIds.subarray(
        layer.layer * rows * TINY.topK,
        (layer.layer + 1) * rows * TINY.topK,
      );
      for (const id of ids) counts[id]!++;
      assert.equal(layer.balancedness_before, balancedness(counts));
      assert.ok(layer.balancedness_before < 0.9, `layer ${layer.layer} starts skewed`);
      assert.ok(
        layer.balancedness_after >= layer.balancedness_before,
        `layer ${layer.layer}: ${layer.balancedness_before} → ${layer.balancedness_after}`,
      );
      assert.equal(layer.bias.length, TINY.experts);
      assert.ok(layer.bias.every(Number.isFinite));
    }
    // Layer 0 sees the same logits in both passes: its bias is the fit on them.
    const fit = fitRoutingBias(layer0Logits[0]!, rows, TINY.experts, gateOptionsFor(manifest));
    assert.deepEqual(report.layers[0]!.bias, [...fit.bias]);
    assert.equal(report.layers[0]!.balancedness_after, fit.balancednessAfter);
    assert.ok(report.layers[0]!.balancedness_after > report.layers[0]!.balancedness_before);
    const { relative_l2, max_abs } = report.output_deviation;
    assert.ok(Number.isFinite(relative_l2) && relative_l2 > 0, `relative_l2 ${relative_l2}`);
    assert.ok(Number.isFinite(max_abs) && max_abs > 0, `max_abs ${max_abs}`);
    assert.ok(report.selection_changed > 0 && report.selection_changed <= 1);
    // The evaluation does not count as client requests.
    assert.equal(engine.stats().requests, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("evaluateRoutingBias() refuses zero rows", async () => {
  const { dir, manifest, engine } = await setUp();
  try {
    await assert.rejects(
      evaluateRoutingBias({ tokens: new Float32Array(0), rows: 0 }, {
        manifest,
        forward: (t, r, o) => engine.probe(t, r, o),
      }),
      /Cannot evaluate a routing bias: no input rows/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MoeEngine.setRoutingBias() validates, steers selection only, and clears", async () => {
  const { dir, engine, tokens, rows } = await setUp();
  try {
    const plain = await engine.infer(tokens.slice(), rows);
    // A zero bias is no change, bit for bit.
    engine.setRoutingBias([new Array(TINY.experts).fill(0), new Array(TINY.experts).fill(0)]);
    const zero = await engine.infer(tokens.slice(), rows);
    assert.deepEqual(zero.output, plain.output);
    assert.deepEqual(zero.expertIds, plain.expertIds);
    // A large bias on expert 5 (group 1) makes every token pick it in both layers.
    const bias = [0, 1].map(() =>
      Array.from({ length: TINY.experts }, (_, e) => e === 5 ? 1e3 : 0)
    );
    assert.deepEqual(engine.setRoutingBias(bias), { active: true, max_abs: [1e3, 1e3] });
    const steered = await engine.infer(tokens.slice(), rows);
    for (let slot = 0; slot < TINY.layers * rows; slot++) {
      const chosen = [...steered.expertIds.subarray(slot * TINY.topK, (slot + 1) * TINY.topK)];
      assert.equal(chosen[0], 5, `slot ${slot} picks expert 5 first`);
    }
    assert.ok(steered.output.every(Number.isFinite));
    // Combine weights stay a softmax over unbiased logits: they still sum to 1.
    for (let slot = 0; slot < TINY.layers * rows; slot++) {
      const w = steered.expertWeights.subarray(slot * TINY.topK, (slot + 1) * TINY.topK);
      assert.ok(Math.abs(w.reduce((a, b) => a + b, 0) - 1) < 1e-5);
    }
    // A bad bias names the field and leaves the active one in place.
    assert.throws(
      () => engine.setRoutingBias([[0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, Infinity, 0, 0, 0, 0]]),
      /bias\[1\]\[3\] must be a finite number, got Infinity/,
    );
    assert.throws(() => engine.setRoutingBias([[0]]), /bias has 1 layers, the model has 2/);
    assert.equal(engine.routingBias().active, true);
    assert.deepEqual(engine.setRoutingBias(null), { active: false, max_abs: [] });
    const cleared = await engine.infer(tokens.slice(), rows);
    assert.deepEqual(cleared.output, plain.output);
    assert.deepEqual(cleared.expertIds, plain.expertIds);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
