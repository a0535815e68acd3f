/**
 * The graph-runner contract of the layer path, run against every runner the layer
 * executables sit on: onnxruntime on the main thread, onnxruntime on a Worker, and the
 * simulated layer runner (real gates, stand-in layer outputs).
 *
 * What every runner must do, through `LayerExecutables` (so the session keys are the
 * production ones): gates equal the model's gate (the float64 reference, ≤ 1e-5); a layer
 * execution returns exactly the outputs asked for, shaped as `compose_layer.ts` says; the
 * fused logits are the next gate on the returned hidden state; routed contributions are
 * linear in the combine weights and zero for rows without assignments; the residual passes
 * through; and splitting a token's experts over two executables (one as a peer's rows)
 * adds up to one executable holding them all — what the dispatcher relies on.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { silentLogger } from "../../shared/logger.ts";
import { type ModelManifest, modelPartPath } from "../../shared/model_manifest.ts";
import { generateModel } from "../../tools/model/generate.ts";
import { gateWeightsFrom, loadOnnxInitializers } from "../../tools/model/onnx_weights.ts";
import { createGaussian, createRandom, gaussianArray } from "../../tools/model/prng.ts";
import { gateLogits } from "../../tools/model/reference_math.ts";
import { maxAbsDiff, TINY_MODEL, withTempDir } from "../../tools/model/test_helpers.ts";
import type { GraphRunner } from "../execution/graph_runner.ts";
import { createOrtRunner } from "../execution/ort_part_executor.ts";
import { SimulatedDevices } from "../execution/simulated_devices.ts";
import { LAYER_IO } from "./compose_layer.ts";
import { assembleLayerBatch, type LayerWork } from "./layer_batch.ts";
import { type LayerExecutable, LayerExecutables } from "./layer_executables.ts";
import { SimulatedLayerRunner } from "./simulated_layer_runner.ts";

interface Implementation {
  name: string;
  create(
    dir: string,
    manifest: ModelManifest,
  ): Promise<{ runner: GraphRunner; close(): Promise<void> }>;
}

const implementations: Implementation[] = [
  {
    name: "OrtInlineRunner",
    create: async (dir, manifest) => {
      const runner = await createOrtRunner({
        modelDir: dir,
        manifest,
        workers: 0,
        providers: ["cpu"],
      });
      return { runner, close: () => runner.close() };
    },
  },
  {
    name: "OrtWorkerRunner",
    create: async (dir, manifest) => {
      const runner = await createOrtRunner({
        modelDir: dir,
        manifest,
        workers: 1,
        providers: ["cpu"],
      });
      return { runner, close: () => runner.close() };
    },
  },
  {
    name: "SimulatedLayerRunner",
    create: (_dir, manifest) => {
      const devices = new SimulatedDevices({ slots: 1 });
      const runner = new SimulatedLayerRunner({
        manifest,
        devices,
        timing: { fixedMs: 0.05, perRowMs: 0.001 },
      });
      return Promise.resolve({
        runner,
        close: async () => {
          await runner.close();
          await devices.close();
        },
      });
    },
  },
];

/** Row `r` of `entry` entry rows (then peers' rows) goes to `experts[r]` with `weights[r]`. */
function work(
  x: Float32Array,
  options: { rows: number; entry: number; experts: number[][]; weights: number[][] },
  residual: Float32Array | null = null,
): LayerWork {
  const row: number[] = [];
  const expert: number[] = [];
  const weight: number[] = [];
  options.experts.forEach((list, r) =>
    list.forEach((e, k) => {
      row.push(r);
      expert.push(e);
      weight.push(options.weights[r]![k]!);
    })
  );
  return {
    rows: x,
    rowCount: options.rows,
    entry: options.entry,
    residual,
    assign: {
      row: Int32Array.from(row),
      expert: Int32Array.from(expert),
      weight: Float32Array.from(weight),
    },
  };
}

async function execute(
  runner: GraphRunner,
  executable: LayerExecutable,
  works: LayerWork[],
  width: number,
): Promise<Record<string, Float32Array>> {
  const batch = assembleLayerBatch(works, {
    width,
    position: executable.position,
    hosted: executable.experts.length,
    fusedGate: executable.fusedGate,
  });
  const run = await runner.run(executable.key, batch.feeds, batch.outputs, batch.totalRows);
  assert.deepEqual(Object.keys(run.outputs).sort(), batch.outputs.toSorted());
  assert.ok(run.ms >= 0);
  return run.outputs;
}

async function gate(runner: GraphRunner, key: string, x: Float32Array, rows: number, d: number) {
  const run = await runner.run(
    key,
    {
      x: { type: "float32", data: x.slice(), dims: [rows, d] },
    },
    ["y"],
    rows,
  );
  return run.outputs["y"]!;
}

for (const { name, create } of implementations) {
  Deno.test(`${name} satisfies the layer runner contract`, async () => {
    await withTempDir(async (dir) => {
      const manifest = await generateModel(dir, TINY_MODEL);
      const d = manifest.d_model;
      const all = Array.from({ length: manifest.experts }, (_, e) => e);
      const { runner, close } = await create(dir, manifest);
      const executables = new LayerExecutables({
        runner,
        manifest,
        modelDir: dir,
        logger: silentLogger,
      });
      try {
        await executables.start([all, all]);
        const whole = executables.current(0);
        assert.ok(runner.has(executables.gateKey(0)) && runner.has(whole.key));
        const x = gaussianArray(createGaussian(createRandom(4)), 5 * d);

        // Gates are the model's gate.
        for (const layer of [0, 1]) {
          const path = join(dir, modelPartPath(manifest, { kind: "gate", layer }));
          const weights = gateWeightsFrom(await loadOnnxInitializers(path));
          const logits = await gate(runner, executables.gateKey(layer), x, 5, d);
          assert.equal(logits.length, 5 * manifest.experts);
          assert.ok(
            maxAbsDiff(logits, gateLogits(weights, x, 5)) <= 1e-5,
            `gate of layer ${layer}`,
          );
        }

        // One execution: 3 entry rows, 2 peer rows (the last without assignments).
        const shape = {
          rows: 5,
          entry: 3,
          experts: [[0, 5], [1, 2], [7, 3], [4, 6], []],
          weights: [[0.7, 0.3], [0.5, 0.5], [0.9, 0.1], [0.6, 0.4], []],
        };
        const out = await execute(runner, whole, [work(x.slice(), shape)], d);
        const hidden = out[LAYER_IO.hidden]!;
        const routed = out[LAYER_IO.routed]!;
        assert.equal(hidden.length, 3 * d);
        assert.equal(routed.length, 5 * d);
        assert.equal(out[LAYER_IO.logits]!.length, 3 * manifest.experts);
        assert.ok(routed.subarray(4 * d).every((v) => v === 0), "a row without assignments");
        assert.ok(routed.subarray(0, 4 * d).some((v) => v !== 0));
        const next = await gate(runner, executables.gateKey(1), hidden, 3, d);
        assert.ok(maxAbsDiff(out[LAYER_IO.logits]!, next) <= 1e-5, "fused logits = next gate");

        // Linear in the weights; the residual passes through.
        const doubled = { ...shape, weights: shape.weights.map((w) => w.map((v) => 2 * v)) };
        const twice = await execute(runner, whole, [work(x.slice(), doubled)], d);
        assert.ok(maxAbsDiff(twice[LAYER_IO.routed]!, routed.map((v) => 2 * v)) <= 1e-5);
        const shifted = x.slice(0, 3 * d).map((v) => v + 1);
        const moved = await execute(runner, whole, [work(x.slice(), shape, shifted)], d);
        assert.ok(maxAbsDiff(moved[LAYER_IO.hidden]!, hidden.map((v) => v + 1)) <= 1e-5);

        // Split over two executables: experts 0–3 here, 4–7 as a peer's rows.
        const tokens = {
          rows: 3,
          entry: 3,
          experts: [[0, 4], [1, 5], [3, 7]],
          weights: [[0.6, 0.4], [0.2, 0.8], [0.5, 0.5]],
        };
        const entry = x.slice(0, 3 * d);
        const one = await execute(runner, whole, [work(entry.slice(), tokens)], d);
        executables.acquire(whole);
        await executables.stage(1, [[0, 1, 2, 3], all]);
        executables.activate(1);
        const low = executables.current(0);
        executables.acquire(low);
        await executables.stage(2, [[4, 5, 6, 7], all]);
        executables.activate(2);
        const high = executables.current(0);
        const lowHalf = { ...tokens, experts: tokens.experts.map(([a]) => [a!]) };
        const highHalf = {
          rows: 3,
          entry: 0,
          experts: tokens.experts.map(([, b]) => [b!]),
          weights: tokens.weights.map(([, w]) => [w!]),
        };
        const peer = await execute(runner, high, [work(entry.slice(), highHalf)], d);
        const residual = entry.map((v, i) => v + peer[LAYER_IO.routed]![i]!);
        const local = await execute(runner, low, [
          work(entry.slice(), {
            ...lowHalf,
            weights: tokens.weights.map(([w]) => [w!]),
          }, residual),
        ], d);
        assert.ok(
          maxAbsDiff(local[LAYER_IO.hidden]!, one[LAYER_IO.hidden]!) <= 1e-5,
          "split over two executables = one holding all",
        );
        executables.release(low);
        executables.release(whole);

        // Keys: unknown and unloaded ones fail; counters count; close ends it.
        await assert.rejects(runner.run("layer/L9#1", {}, [], 0), /not loaded/);
        const before = runner.stats().executions;
        await gate(runner, executables.gateKey(0), x, 5, d);
        assert.equal(runner.stats().executions, before + 1);
        await runner.unload(executables.gateKey(0));
        assert.ok(!runner.has(executables.gateKey(0)));
        await assert.rejects(gate(runner, executables.gateKey(0), x, 5, d), /not loaded/);
      } finally {
        await close();
      }
      await assert.rejects(runner.run(executables.gateKey(1), {}, ["y"], 0), /closed/);
    });
  });
}
