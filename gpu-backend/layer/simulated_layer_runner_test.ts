/** Device time, stand-in outputs, loads and refusals of the simulated layer runner. */
import assert from "node:assert/strict";
import fc from "fast-check";
import { silentLogger } from "../../shared/logger.ts";
import { ModelManifestSchema } from "../../shared/model_manifest.ts";
import { generateModel } from "../../tools/model/generate.ts";
import { createGaussian, createRandom, gaussianArray } from "../../tools/model/prng.ts";
import { withTempDir } from "../../tools/model/test_helpers.ts";
import { manualTimers } from "../../tests/_support/gpu-backend/manual_timers.ts";
import type { Feeds } from "../execution/graph_runner.ts";
import { type BusyPeriod, SimulatedDevices } from "../execution/simulated_devices.ts";
import { LAYER_IO } from "./compose_layer.ts";
import { LayerExecutables } from "./layer_executables.ts";
import {
  ROUTED_STAND_IN,
  SHARED_STAND_IN,
  SimulatedLayerRunner,
} from "./simulated_layer_runner.ts";

const TIMING = { fixedMs: 0.5, perRowMs: 0.25 };

/** Feeds of one layer execution: `entry` of `total` rows, row `i % total` per assignment. */
function layerFeeds(d: number, total: number, entry: number, assignments: number): Feeds {
  const gaussian = createGaussian(createRandom(total * 31 + assignments));
  const src = Int32Array.from({ length: assignments }, (_, i) => i % total);
  return {
    [LAYER_IO.rows]: {
      type: "float32",
      data: gaussianArray(gaussian, total * d),
      dims: [total, d],
    },
    [LAYER_IO.residual]: {
      type: "float32",
      data: gaussianArray(gaussian, entry * d),
      dims: [entry, d],
    },
    [LAYER_IO.src]: { type: "int32", data: src, dims: [assignments] },
    [LAYER_IO.counts]: { type: "int32", data: Int32Array.of(assignments), dims: [1] },
    [LAYER_IO.weight]: {
      type: "float32",
      data: Float32Array.from({ length: assignments }, (_, i) => 0.25 + (i % 3) / 4),
      dims: [assignments, 1],
    },
  };
}

Deno.test("a layer execution occupies the device for fixed + per_expert × experts given rows + per_row × its expert rows, with stand-in outputs", async () => {
  await withTempDir(async (dir) => {
    // E / (2·d_ff) = 16 / 64: a gate row costs a quarter of an expert row.
    const manifest = await generateModel(dir, {
      dModel: 8,
      dFf: 32,
      layers: 2,
      experts: 16,
      topK: 2,
      groups: 1,
      topkGroup: 1,
      sharedExperts: 2,
    });
    const devices = new SimulatedDevices({ slots: 1 });
    const runner = new SimulatedLayerRunner({ manifest, devices, timing: TIMING });
    const executables = new LayerExecutables({
      runner,
      manifest,
      modelDir: dir,
      logger: silentLogger,
    });
    try {
      await executables.start([[3], [3]]);
      const key = executables.current(0).key;
      const d = manifest.d_model;
      // 4 entry rows, 2 peer rows, 9 assignments.
      const feeds = layerFeeds(d, 6, 4, 9);
      const withGate = await runner.run(key, feeds, [
        LAYER_IO.hidden,
        LAYER_IO.routed,
        LAYER_IO.logits,
      ], 6);
      assert.equal(withGate.ms, 0.5 + 0.25 * (9 + 4 * 2 + 4 * 0.25));
      const plain = await runner.run(key, layerFeeds(d, 6, 4, 9), [LAYER_IO.hidden], 6);
      assert.equal(plain.ms, 0.5 + 0.25 * (9 + 4 * 2));
      // Each routed expert given rows adds per_expert_ms; one without rows adds nothing.
      const perExpert = new SimulatedLayerRunner({
        manifest,
        devices: new SimulatedDevices({ slots: 1 }),
        timing: { ...TIMING, perExpertMs: 0.125 },
      });
      await perExpert.load(key, { size: 0 });
      const spread = layerFeeds(d, 6, 4, 9);
      spread[LAYER_IO.counts] = { type: "int32", data: Int32Array.of(5, 0, 4), dims: [3] };
      const touched = await perExpert.run(key, spread, [LAYER_IO.hidden], 6);
      assert.equal(touched.ms, 0.5 + 0.125 * 2 + 0.25 * (9 + 4 * 2));
      await perExpert.close();
      assert.deepEqual(Object.keys(plain.outputs), [LAYER_IO.hidden]);
      const gate = await runner.run(
        executables.gateKey(0),
        {
          x: { type: "float32", data: new Float32Array(3 * d), dims: [3, d] },
        },
        ["y"],
        3,
      );
      assert.equal(gate.ms, 0.5 + 0.25 * 3 * 0.25);
      assert.equal(gate.outputs["y"]!.length, 3 * manifest.experts);

      // Stand-ins: routed = 0.01 · Σ weights · row; hidden = residual + routed + 0.005·S·row.
      const rows = feeds[LAYER_IO.rows]!.data as Float32Array;
      const residual = feeds[LAYER_IO.residual]!.data as Float32Array;
      const weight = feeds[LAYER_IO.weight]!.data as Float32Array;
      const scale = [0, 0, 0, 0, 0, 0];
      for (let i = 0; i < 9; i++) scale[i % 6]! += weight[i]!;
      const routed = withGate.outputs[LAYER_IO.routed]!;
      const hidden = withGate.outputs[LAYER_IO.hidden]!;
      for (let i = 0; i < 6 * d; i++) {
        const r = Math.floor(i / d);
        assert.ok(Math.abs(routed[i]! - ROUTED_STAND_IN * scale[r]! * rows[i]!) < 1e-6);
        if (r < 4) {
          const expected = residual[i]! + routed[i]! + SHARED_STAND_IN * 2 * rows[i]!;
          assert.ok(Math.abs(hidden[i]! - expected) < 1e-6);
        }
      }
      assert.deepEqual(runner.stats(), {
        slots: 1,
        executions: 3,
        rows: 15,
        busyMs: withGate.ms + plain.ms + gate.ms,
        queued: 0,
        running: 0,
      });
    } finally {
      await runner.close();
      await devices.close();
    }
  });
});

const manifest = ModelManifestSchema.parse({
  name: "sim",
  d_model: 4,
  d_ff: 8,
  layers: 2,
  experts: 4,
  top_k: 2,
  shared_experts: 1,
});

Deno.test("simulated layer executions never overlap on the device and never start before they arrive", async () => {
  const batches = fc.array(
    fc.record({
      gapMs: fc.integer({ min: 0, max: 6 }),
      total: fc.integer({ min: 1, max: 6 }),
      entryShare: fc.double({ min: 0, max: 1, noNaN: true }),
      assignments: fc.integer({ min: 0, max: 12 }),
    }),
    { minLength: 1, maxLength: 20 },
  );
  await fc.assert(
    fc.asyncProperty(batches, async (arrivals) => {
      const clock = manualTimers();
      const periods: BusyPeriod[] = [];
      const devices = new SimulatedDevices({
        slots: 1,
        now: clock.now,
        sleep: clock.sleep,
        onBusy: (period) => periods.push(period),
      });
      const runner = new SimulatedLayerRunner({ manifest, devices, timing: TIMING });
      const expected: number[] = [];
      const runs: Promise<unknown>[] = [];
      const driver = (async () => {
        await runner.load("layer/L1#1", { bytes: new Uint8Array(64) });
        for (const { gapMs, total, entryShare, assignments } of arrivals) {
          if (gapMs > 0) await clock.sleep(gapMs);
          const entry = Math.floor(entryShare * total);
          // The last layer: no fused gate, so no logits.
          expected.push(0.5 + 0.25 * (assignments + entry * manifest.shared_experts));
          runs.push(runner.run("layer/L1#1", layerFeeds(4, total, entry, assignments), [
            LAYER_IO.hidden,
            LAYER_IO.routed,
          ], total));
        }
      })();
      await clock.run();
      await driver;
      await Promise.all(runs);
      assert.deepEqual(periods.map((p) => p.end - p.start), expected);
      periods.forEach((period, i) => {
        assert.ok(period.start >= period.arrivedAt, `execution ${i} started before it arrived`);
        if (i > 0) assert.ok(period.start >= periods[i - 1]!.end, `execution ${i} overlaps`);
      });
      await runner.close();
      await devices.close();
    }),
    { numRuns: 50 },
  );
});

Deno.test("loading a layer executable takes load_fixed_ms + load_ms_per_mb · MiB of timer time", async () => {
  const clock = manualTimers();
  const devices = new SimulatedDevices({ slots: 1, now: clock.now, sleep: clock.sleep });
  const runner = new SimulatedLayerRunner({
    manifest,
    devices,
    timing: { ...TIMING, loadFixedMs: 2, loadMsPerMb: 4 },
  });
  let loadedAt = -1;
  const loading = runner.load("layer/L0#1", { bytes: new Uint8Array(2 ** 19) }).then(() => {
    loadedAt = clock.now();
  });
  assert.ok(!runner.has("layer/L0#1"));
  await clock.run();
  await loading;
  assert.equal(loadedAt, 2 + 4 * 0.5);
  assert.ok(runner.has("layer/L0#1"));
  assert.equal(devices.stats().busyMs, 0, "a load is no device time");
  await runner.unload("layer/L0#1");
  assert.ok(!runner.has("layer/L0#1"));
  await runner.close();
  await devices.close();
});

Deno.test("the simulated layer runner refuses bad feeds, unknown outputs and a missing next gate", async () => {
  const clock = manualTimers();
  const devices = new SimulatedDevices({ slots: 1, now: clock.now, sleep: clock.sleep });
  const runner = new SimulatedLayerRunner({ manifest, devices, timing: TIMING });
  const loading = runner.load("layer/L0#1", { bytes: new Uint8Array(1) });
  await clock.run();
  await loading;
  const key = "layer/L0#1";
  const feeds = layerFeeds(4, 3, 2, 4);
  await assert.rejects(runner.run(key, feeds, [LAYER_IO.logits], 3), /next layer's gate/);
  await assert.rejects(runner.run(key, feeds, ["y"], 3), /has no output "y"/);
  const { [LAYER_IO.src]: _, ...noSrc } = feeds;
  await assert.rejects(runner.run(key, noSrc, [LAYER_IO.hidden], 3), /input "src" \(int32\)/);
  const outside = {
    ...feeds,
    [LAYER_IO.src]: { type: "int32", data: Int32Array.of(0, 1, 2, 3), dims: [4] },
  } as Feeds;
  await assert.rejects(runner.run(key, outside, [LAYER_IO.hidden], 3), /row 3 outside \[0, 3\)/);
  const narrow = layerFeeds(3, 3, 2, 4);
  await assert.rejects(runner.run(key, narrow, [LAYER_IO.hidden], 3), /do not fit d_model 4/);
  assert.throws(
    () => new SimulatedLayerRunner({ manifest, devices, timing: { fixedMs: -1, perRowMs: 0 } }),
    /fixedMs must be >= 0/,
  );
  await runner.close();
  await assert.rejects(runner.run(key, feeds, [LAYER_IO.hidden], 3), /closed/);
  await assert.rejects(runner.load(key, { bytes: new Uint8Array(1) }), /closed/);
  await devices.close();
});
