/** Timing, queueing and output tests of the simulated executor, on a manual clock. */
import assert from "node:assert/strict";
import { ModelManifestSchema, type ModelPart } from "../../shared/model_manifest.ts";
import { generateModel } from "../../tools/model/generate.ts";
import { calibrateFromOrt, fitTiming, nonNegativeLeastSquares } from "./calibrate.ts";
import { createExecutor } from "./create_executor.ts";
import type { GraphRunner } from "./graph_runner.ts";
import type { SimulatedDevices } from "./simulated_devices.ts";
import { SimulatedExecutor, type SimulatedExecutorOptions } from "./simulated_executor.ts";
import { type ManualTimers, manualTimers } from "../../tests/_support/gpu-backend/manual_timers.ts";

const manifest = ModelManifestSchema.parse({
  name: "sim",
  d_model: 4,
  d_ff: 8,
  layers: 2,
  experts: 4,
  top_k: 2,
  shared_experts: 1,
});
const EXPERT: ModelPart = { kind: "expert", layer: 0, expert: 1 };

function simulated(
  clock: ManualTimers,
  options: Partial<SimulatedExecutorOptions> = {},
): SimulatedExecutor {
  return new SimulatedExecutor({
    manifest,
    slots: 1,
    fixedMs: 0.5,
    perRowMs: 0.25,
    now: clock.now,
    sleep: clock.sleep,
    ...options,
  });
}

/** Submits jobs of `rows` rows in order; returns each job's finish time on the clock. */
async function finishTimes(
  executor: SimulatedExecutor,
  clock: ManualTimers,
  rows: number[],
): Promise<{ finished: number[]; order: number[] }> {
  const finished: number[] = [];
  const order: number[] = [];
  const jobs = rows.map((n, i) =>
    executor.execute(EXPERT, new Float32Array(n * manifest.d_model), n).then(() => {
      finished[i] = clock.now();
      order.push(i);
    })
  );
  await clock.run();
  await Promise.all(jobs);
  return { finished, order };
}

Deno.test("SimulatedExecutor: a job takes exactly fixedMs + perRowMs·rows", async () => {
  const clock = manualTimers();
  const executor = simulated(clock);
  let finishedAt = -1;
  const job = executor.execute(EXPERT, new Float32Array(6 * 4), 6).then((execution) => {
    finishedAt = clock.now();
    return execution;
  });
  await clock.run();
  const { ms } = await job;
  assert.equal(ms, 0.5 + 0.25 * 6);
  assert.equal(finishedAt, 2);
  assert.equal(executor.stats().busyMs, 2);
  assert.equal(executor.stats().executions, 1);
  assert.equal(executor.stats().rows, 6);
  await executor.close();
});

Deno.test("SimulatedExecutor: 2 slots finish 4 equal jobs in 2 rounds", async () => {
  const clock = manualTimers();
  const executor = simulated(clock, { slots: 2 });
  assert.equal(executor.depth, 2);
  const run = finishTimes(executor, clock, [6, 6, 6, 6]);
  // Before time moves: two jobs on the devices, two in the queue.
  assert.deepEqual({ ...executor.stats(), busyMs: 0 }, {
    slots: 2,
    executions: 0,
    rows: 0,
    busyMs: 0,
    queued: 2,
    running: 2,
  });
  const { finished } = await run;
  assert.deepEqual(finished, [2, 2, 4, 4]);
  assert.equal(executor.stats().busyMs, 8);
  assert.equal(executor.stats().running, 0);
  await executor.close();
});

Deno.test("SimulatedExecutor: queued jobs start in arrival order", async () => {
  const clock = manualTimers();
  const one = simulated(clock);
  // Durations 2.5, 0.75, 1.5, 1 ms: FIFO on one device finishes them back to back.
  const single = await finishTimes(one, clock, [8, 1, 4, 2]);
  assert.deepEqual(single.order, [0, 1, 2, 3]);
  assert.deepEqual(single.finished, [2.5, 3.25, 4.75, 5.75]);
  await one.close();

  // Two devices: job 2 takes the first device to free up (job 1's), job 3 the next.
  const two = simulated(clock, { slots: 2 });
  const start = clock.now();
  const double = await finishTimes(two, clock, [8, 1, 4, 2]);
  assert.deepEqual(double.finished.map((t) => t - start), [2.5, 0.75, 2.25, 3.25]);
  assert.deepEqual(double.order, [1, 2, 0, 3]);
  await two.close();
});

Deno.test("SimulatedExecutor: late timers delay answers but lose no throughput", async () => {
  const clock = manualTimers({ lateMs: 1 });
  const executor = simulated(clock);
  const { finished } = await finishTimes(executor, clock, [6, 6, 6, 6]);
  // Every answer comes 1 ms late, but the devices stay on their 2 ms schedule.
  assert.deepEqual(finished, [3, 5, 7, 9]);
  assert.equal(executor.stats().busyMs, 8);
  await executor.close();
});

Deno.test("SimulatedExecutor: outputs are deterministic, shaped and differ per expert", async () => {
  const clock = manualTimers();
  const a = simulated(clock, { slots: 2 });
  const b = simulated(clock, { slots: 2 });
  const x = Float32Array.from({ length: 3 * 4 }, (_, i) => Math.cos(i));
  const run = async (executor: SimulatedExecutor, part: ModelPart, input = x) => {
    const pending = executor.execute(part, input.slice(), 3);
    await clock.run();
    return (await pending).output;
  };
  const gate = await run(a, { kind: "gate", layer: 1 });
  assert.equal(gate.length, 3 * manifest.experts);
  assert.deepEqual(gate, await run(b, { kind: "gate", layer: 1 }));
  assert.notDeepEqual(gate, await run(a, { kind: "gate", layer: 1 }, x.map((v) => -v + 1)));
  assert.notDeepEqual(gate, await run(a, { kind: "gate", layer: 0 }));

  const expert0 = await run(a, { kind: "expert", layer: 0, expert: 0 });
  assert.deepEqual(expert0, x.map((v) => v * 0.01));
  const expert3 = await run(a, { kind: "expert", layer: 0, expert: 3 });
  assert.deepEqual(expert3, x.map((v) => v * (0.01 * (1 + 3 / 4))));
  const shared = await run(a, { kind: "shared", layer: 0, expert: 0 });
  assert.deepEqual(shared, x.map((v) => v * 0.005));
  assert.deepEqual(shared, await run(b, { kind: "shared", layer: 0, expert: 0 }));
  await a.close();
  await b.close();
});

Deno.test("SimulatedExecutor: rejects unknown parts, bad inputs and runs after close", async () => {
  const clock = manualTimers();
  const executor = simulated(clock);
  const row = new Float32Array(4);
  await assert.rejects(executor.execute({ kind: "gate", layer: 2 }, row, 1), /L2\/gate.*2 layer/);
  await assert.rejects(executor.execute({ kind: "expert", layer: 0, expert: 4 }, row, 1), /L0\/E4/);
  await assert.rejects(executor.execute({ kind: "shared", layer: 0, expert: 1 }, row, 1), /L0\/S1/);
  await assert.rejects(executor.execute(EXPERT, row, 2), /4 values, not 2 rows × 4/);
  assert.throws(() => simulated(clock, { slots: 0 }), RangeError);
  assert.throws(() => simulated(clock, { perRowMs: -1 }), RangeError);

  // Closing rejects queued jobs and waits for the running one.
  const running = executor.execute(EXPERT, row.slice(), 1);
  const queued = executor.execute(EXPERT, row.slice(), 1);
  const rejected = assert.rejects(queued, /closed/);
  const closed = executor.close();
  await rejected;
  await clock.run();
  await closed;
  assert.equal((await running).ms, 0.75);
  await assert.rejects(executor.execute(EXPERT, row, 1), /closed/);
});

Deno.test("fitTiming() recovers fixedMs and perRowMs from exact samples", () => {
  const samples = [1, 4, 16, 64].map((rows) => ({ rows, ms: 0.3 + 0.02 * rows }));
  const timing = fitTiming(samples);
  assert.ok(Math.abs(timing.fixedMs - 0.3) < 1e-12, String(timing.fixedMs));
  assert.ok(Math.abs(timing.perRowMs - 0.02) < 1e-12, String(timing.perRowMs));
});

Deno.test("nonNegativeLeastSquares() recovers three terms and clamps a negative one to 0", () => {
  // ms = 0.05 + 0.012 · experts + 0.0012 · rows, over a grid that tells the terms apart.
  const grid = [[8, 10], [8, 640], [32, 40], [32, 640], [102, 160], [102, 2560]];
  const exact = nonNegativeLeastSquares(
    grid.map(([e, r]) => [1, e!, r!]),
    grid.map(([e, r]) => 0.05 + 0.012 * e! + 0.0012 * r!),
  );
  exact.forEach((c, i) => assert.ok(Math.abs(c - [0.05, 0.012, 0.0012][i]!) < 1e-9, `${exact}`));
  // Time falling with experts: that term is 0 and the rest is refitted without it.
  const clamped = nonNegativeLeastSquares(
    [[1, 1, 1], [1, 2, 2], [1, 3, 1], [1, 4, 2]],
    [2, 3, 1, 2],
  );
  assert.equal(clamped[1], 0);
  assert.ok(clamped.every((c) => c >= 0), `${clamped}`);
  assert.ok(Math.abs(clamped[0]! - 0.5) < 1e-9 && Math.abs(clamped[2]! - 1) < 1e-9, `${clamped}`);
});

Deno.test("fitTiming() clamps negative coefficients to the best non-negative fit", () => {
  // Time falling with rows: all of it is fixed time, the mean.
  assert.deepEqual(fitTiming([{ rows: 1, ms: 3 }, { rows: 3, ms: 1 }]), {
    fixedMs: 2,
    perRowMs: 0,
  });
  // Intercept below zero: a line through the origin, Σ rows·ms / Σ rows².
  assert.deepEqual(fitTiming([{ rows: 1, ms: 1 }, { rows: 2, ms: 3 }]), {
    fixedMs: 0,
    perRowMs: 7 / 5,
  });
  // One batch size: the time goes to fixedMs.
  assert.deepEqual(fitTiming([{ rows: 4, ms: 1 }, { rows: 4, ms: 3 }]), {
    fixedMs: 2,
    perRowMs: 0,
  });
  assert.throws(() => fitTiming([]), /no samples/);
  assert.throws(() => fitTiming([{ rows: 1, ms: Number.NaN }]), RangeError);
});

Deno.test("calibrateFromOrt() fits a finite, non-negative timing to a real expert", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const generated = await generateModel(dir, {
      dModel: 16,
      dFf: 32,
      layers: 1,
      experts: 4,
      groups: 1,
      topkGroup: 1,
      sharedExperts: 0,
    });
    const calibration = await calibrateFromOrt(dir, generated);
    // The fit is constrained to ≥ 0; what can fail: it must charge time for real work.
    assert.ok(Number.isFinite(calibration.fixedMs) && Number.isFinite(calibration.perRowMs));
    assert.ok(calibration.samples.every((s) => s.ms > 0), JSON.stringify(calibration.samples));
    assert.ok(
      calibration.fixedMs + calibration.perRowMs > 0,
      `one row predicted at ${calibration.fixedMs + calibration.perRowMs} ms`,
    );
    assert.deepEqual(calibration.samples.map((s) => s.rows), [1, 4, 16, 64]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createExecutor() builds a simulated executor with one device per worker", async () => {
  const options = {
    kind: "simulated",
    modelDir: "unused",
    manifest,
    workers: 3,
    providers: [],
  } as const;
  const executor = await createExecutor({ ...options, simulated: { fixedMs: 1, perRowMs: 0 } });
  assert.equal(executor.fallbacks, undefined);
  assert.ok(executor instanceof SimulatedExecutor);
  assert.equal(executor.provider, "simulated");
  assert.equal(executor.slots, 3);
  await executor.close();
  await assert.rejects(createExecutor(options), /timing is missing/);
});

Deno.test("SimulatedExecutor charges a gate its FLOPs relative to an expert", () => {
  const wide = ModelManifestSchema.parse({
    name: "w",
    d_model: 8,
    d_ff: 64,
    layers: 1,
    experts: 16,
    top_k: 2,
  });
  const executor = new SimulatedExecutor({ manifest: wide, slots: 1, fixedMs: 1, perRowMs: 0.5 });
  assert.equal(executor.durationMs(4, { kind: "expert", layer: 0, expert: 3 }), 3);
  // E / (2·d_ff) = 16 / 128 = 1/8 of an expert's time.
  assert.equal(executor.durationMs(4, { kind: "gate", layer: 0 }), 3 / 8);
});

Deno.test("createExecutor() builds the layer runner on the simulated executor's own devices", async () => {
  let devices: SimulatedDevices | undefined;
  const runner = { close: () => Promise.resolve() } as unknown as GraphRunner;
  const executor = await createExecutor({
    kind: "simulated",
    modelDir: "unused",
    manifest,
    workers: 0,
    providers: [],
    simulated: { fixedMs: 0, perRowMs: 0 },
    layerRunner: (given) => {
      devices = given;
      return runner;
    },
  });
  assert.ok(executor instanceof SimulatedExecutor);
  assert.equal(executor.runner, runner);
  assert.equal(devices?.slots, 1, "one device: executors 0 or 1 is one accelerator");
  await executor.execute(EXPERT, new Float32Array(manifest.d_model), 1);
  assert.equal(devices!.stats().executions, 1, "the executor runs on the runner's devices");
  await executor.close();
});
