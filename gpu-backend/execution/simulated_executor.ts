/**
 * @module A SIMULATED executor for pool-scale experiments. ITS RESULTS ARE NOT MODEL OUTPUTS.
 *
 * For benchmarks only, never a default (`backend.executor: simulated`). It spends a
 * configured device time per execution instead of computing, so many backends can share a
 * small machine and still behave like separate accelerators.
 *
 * Design. It runs on {@linkcode SimulatedDevices}: a job of `rows` rows occupies one of
 * `slots` devices for `fixedMs + perRowMs·rows` ms (the shape of a real accelerator's
 * service curve; `calibrate.ts` can measure one, the CLI defaults are assumed), jobs
 * beyond `slots` wait in one FIFO, and waiting is timer-based, so a simulated device
 * costs no CPU while it is "busy" (the invariants are in `simulated_devices.ts`). On the
 * layer path the simulated layer runner (`simulated_layer_runner.ts` in
 * `gpu-backend/layer/`) shares the same devices and is exposed as `runner`, as an
 * onnxruntime executor exposes its graph runner.
 *
 * Outputs are a cheap deterministic stand-in of the right shape, so the MoE forward pass
 * runs end to end:
 * - gate: logits `[rows, experts]` = the first `min(d_model, 16)` columns times a fixed
 *   ±1 projection per layer, ÷ √columns (linear in the input, so tokens that point the
 *   same way still prefer the same experts);
 * - routed expert `e`: `input · 0.01·(1 + e/experts)`; shared expert `s`:
 *   `input · 0.005·(1 + s/shared_experts)` — every expert answers differently, and the
 *   residual updates stay small over many layers.
 *
 * Residency: parts are loaded (all of them at start unless `parts` says otherwise) and
 * can be unloaded; running an unloaded part fails, as with onnxruntime. Loading a part
 * takes `loadFixedMs + loadMsPerMb · MiB` of simulated time (MiB of the manifest's
 * expert weights, `estimatedExpertBytes`; gates and shared experts load only at start,
 * for free). A load is a timer, not device time: weight copies overlap compute on real
 * accelerators, so loading does not occupy a simulated device.
 */
import {
  listModelParts,
  type ModelManifest,
  type ModelPart,
  modelPartKey,
} from "../../shared/model_manifest.ts";
import type { Execution, ExecutorStats, ExpertExecutor } from "./executor.ts";
import type { GraphRunner } from "./graph_runner.ts";
import { SimulatedDevices } from "./simulated_devices.ts";
import { estimatedExpertBytes } from "../residency/expert_bytes.ts";

/** Device time of one execution: `fixedMs + perRowMs·rows` milliseconds. */
export interface SimulatedTiming {
  /** Milliseconds every execution costs, whatever its size. */
  fixedMs: number;
  /** Milliseconds each row adds. */
  perRowMs: number;
  /**
   * Milliseconds each routed expert with rows adds to a layer execution (its weights
   * streamed once: `calibrate_layer.ts`); default 0. Per-expert jobs run one expert, so
   * they fold it into `fixedMs`.
   */
  perExpertMs?: number;
  /** Milliseconds every load of a routed expert costs (default 0). */
  loadFixedMs?: number;
  /** Milliseconds per MiB of weights a load adds (default 0). */
  loadMsPerMb?: number;
}

/** Options of {@linkcode SimulatedExecutor}. */
export interface SimulatedExecutorOptions extends SimulatedTiming {
  /** The model whose parts it pretends to run. */
  manifest: ModelManifest;
  /** Simulated devices: jobs executed at the same time (ignored when `devices` is given). */
  slots: number;
  /** Clock in ms; default `performance.now` (ignored when `devices` is given). */
  now?: () => number;
  /** Resolves after `ms` milliseconds; default a `setTimeout` (ignored with `devices`). */
  sleep?: (ms: number) => Promise<void>;
  /** The devices to run on (shared with `runner`); default its own `slots` devices. */
  devices?: SimulatedDevices;
  /** The simulated graph runner of the layer path, on the same devices; closed with it. */
  runner?: GraphRunner;
  /** Parts loaded at start; default every part of the model. */
  parts?: readonly ModelPart[];
}

/** Input columns the simulated gate reads. */
const GATE_COLUMNS = 16;

/** Executor that spends `fixedMs + perRowMs·rows` per job; outputs are NOT model outputs. */
export class SimulatedExecutor implements ExpertExecutor {
  readonly provider = "simulated";
  readonly slots: number;
  readonly depth: number;
  /** The layer path's simulated runner (same devices), when the backend runs one. */
  readonly runner: GraphRunner | undefined;
  readonly #manifest: ModelManifest;
  readonly #timing: SimulatedTiming;
  readonly #gateScale: number;
  readonly #devices: SimulatedDevices;
  readonly #projections = new Map<number, Float32Array>();
  /** Keys of loaded parts; `null` = every part (nothing unloaded yet). */
  #loaded: Set<string> | null = null;
  readonly #loadMs: number;
  #executions = 0;
  #rows = 0;
  #busyMs = 0;
  #closed = false;

  constructor(options: SimulatedExecutorOptions) {
    if (!options.devices && (!Number.isInteger(options.slots) || options.slots < 1)) {
      throw new RangeError(`Cannot simulate an executor: slots must be >= 1, got ${options.slots}`);
    }
    for (const field of ["fixedMs", "perRowMs", "loadFixedMs", "loadMsPerMb"] as const) {
      const value = options[field] ?? 0;
      if (!Number.isFinite(value) || value < 0) {
        throw new RangeError(`Cannot simulate an executor: ${field} must be >= 0, got ${value}`);
      }
    }
    this.#devices = options.devices ?? new SimulatedDevices({
      slots: options.slots,
      ...(options.now ? { now: options.now } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
    this.slots = this.#devices.slots;
    this.depth = this.#devices.slots;
    this.runner = options.runner;
    this.#manifest = options.manifest;
    this.#timing = { fixedMs: options.fixedMs, perRowMs: options.perRowMs };
    this.#gateScale = Math.min(1, options.manifest.experts / (2 * options.manifest.d_ff));
    this.#loadMs = (options.loadFixedMs ?? 0) +
      (options.loadMsPerMb ?? 0) * estimatedExpertBytes(options.manifest) / 2 ** 20;
    if (options.parts) this.#loaded = new Set(options.parts.map(modelPartKey));
  }

  /**
   * Simulated device milliseconds of one execution of `rows` rows. The timing describes
   * an expert; a gate costs its FLOPs relative to an expert's (`E / (2·d_ff)`: a
   * `[d, E]` projection against a `[d, d_ff]` + `[d_ff, d]` MLP), so pools of many
   * small experts are not dominated by simulated gate time no real gate would take.
   */
  durationMs(rows: number, part?: ModelPart): number {
    const scale = part?.kind === "gate" ? this.#gateScale : 1;
    return scale * (this.#timing.fixedMs + this.#timing.perRowMs * rows);
  }

  /** Simulated milliseconds to load one routed expert. */
  loadMs(): number {
    return this.#loadMs;
  }

  /** Loads parts, taking {@linkcode loadMs} per part not loaded yet (one after another). */
  async load(parts: readonly ModelPart[]): Promise<void> {
    if (this.#closed) throw new Error("Cannot load: executor is closed");
    const missing = parts.filter((part) => !this.isLoaded(part));
    if (missing.length === 0) return;
    await this.#devices.delay(this.#loadMs * missing.length);
    for (const part of missing) this.#loaded?.add(modelPartKey(part));
  }

  /** Unloads parts (running them fails until they are loaded again). */
  unload(parts: readonly ModelPart[]): Promise<void> {
    if (parts.length === 0) return Promise.resolve();
    this.#loaded ??= new Set(listModelParts(this.#manifest).map(modelPartKey));
    for (const part of parts) this.#loaded.delete(modelPartKey(part));
    return Promise.resolve();
  }

  /** Whether a part is loaded. */
  isLoaded(part: ModelPart): boolean {
    return this.#loaded === null || this.#loaded.has(modelPartKey(part));
  }

  async execute(part: ModelPart, input: Float32Array, rows: number): Promise<Execution> {
    if (this.#closed) throw new Error("Cannot run: executor is closed");
    const problem = this.#check(part, input, rows);
    if (problem) throw problem;
    if (!this.isLoaded(part)) {
      throw new Error(`Cannot run "${modelPartKey(part)}": part is not loaded`);
    }
    const { value: output, ms } = await this.#devices.submit(
      this.durationMs(rows, part),
      rows,
      () => this.#compute(part, input, rows),
    );
    this.#executions++;
    this.#rows += rows;
    this.#busyMs += ms;
    return { output, ms };
  }

  stats(): ExecutorStats {
    const devices = this.#devices.stats();
    return {
      slots: this.slots,
      executions: this.#executions,
      rows: this.#rows,
      busyMs: this.#busyMs,
      queued: devices.queued,
      running: devices.running,
    };
  }

  /**
   * Rejects queued jobs and waits for running ones, so no timer outlives the executor;
   * then closes the runner (its sessions are no longer in use).
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#devices.close();
    await this.runner?.close();
  }

  #check(part: ModelPart, input: Float32Array, rows: number): Error | undefined {
    const m = this.#manifest;
    const key = modelPartKey(part);
    if (!Number.isInteger(part.layer) || part.layer < 0 || part.layer >= m.layers) {
      return new RangeError(`Cannot run "${key}": the model has ${m.layers} layer(s)`);
    }
    if (part.kind !== "gate") {
      const count = part.kind === "expert" ? m.experts : m.shared_experts;
      if (!Number.isInteger(part.expert) || part.expert < 0 || part.expert >= count) {
        return new RangeError(`Cannot run "${key}": the model has ${count} ${part.kind} expert(s)`);
      }
    }
    if (!Number.isInteger(rows) || rows < 0 || input.length !== rows * m.d_model) {
      return new RangeError(
        `Cannot run "${key}": input holds ${input.length} values, not ${rows} rows × ${m.d_model}`,
      );
    }
    return undefined;
  }

  #compute(part: ModelPart, input: Float32Array, rows: number): Float32Array {
    const { d_model: width, experts, shared_experts: shared } = this.#manifest;
    if (part.kind === "gate") {
      const columns = Math.min(width, GATE_COLUMNS);
      const projection = this.#projection(part.layer, columns);
      const logits = new Float32Array(rows * experts);
      for (let r = 0; r < rows; r++) {
        for (let e = 0; e < experts; e++) {
          let sum = 0;
          for (let j = 0; j < columns; j++) {
            sum += input[r * width + j]! * projection[e * columns + j]!;
          }
          logits[r * experts + e] = sum;
        }
      }
      return logits;
    }
    const scale = part.kind === "expert"
      ? 0.01 * (1 + part.expert / experts)
      : 0.005 * (1 + part.expert / shared);
    const output = new Float32Array(rows * width);
    for (let i = 0; i < output.length; i++) output[i] = input[i]! * scale;
    return output;
  }

  /** The layer's `[experts, columns]` gate projection of ±1/√columns, built once. */
  #projection(layer: number, columns: number): Float32Array {
    let projection = this.#projections.get(layer);
    if (!projection) {
      const { experts } = this.#manifest;
      const unit = 1 / Math.sqrt(columns);
      projection = new Float32Array(experts * columns);
      for (let e = 0; e < experts; e++) {
        for (let j = 0; j < columns; j++) {
          projection[e * columns + j] = hashBit(layer, e, j) ? unit : -unit;
        }
      }
      this.#projections.set(layer, projection);
    }
    return projection;
  }
}

/** A fixed pseudo-random bit of `(layer, expert, column)` (integer hash, not cryptographic). */
function hashBit(layer: number, expert: number, column: number): boolean {
  let hash = Math.imul(layer + 1, 0x9e3779b1) ^ Math.imul(expert + 1, 0x85ebca6b) ^
    Math.imul(column + 1, 0xc2b2ae35);
  hash = Math.imul(hash ^ (hash >>> 16), 0x21f0aaad);
  hash = Math.imul(hash ^ (hash >>> 15), 0x735a2d97);
  return ((hash ^ (hash >>> 15)) & 1) === 1;
}
