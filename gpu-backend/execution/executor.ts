/**
 * @module The executor interface: something that runs one ONNX part of a model
 * (a gate, a routed expert or a shared expert) on a batch of rows.
 *
 * Implementations: per-part onnxruntime sessions on the Workers or the main thread
 * (`ort_part_executor.ts`), the simulated executor (benchmarks: configured device time,
 * not model outputs) and the pure-TypeScript reference executor (tests). All pass
 * `executor_contract_test.ts`. The composed layer executables (`gpu-backend/layer/`)
 * run on the same onnxruntime runner but have an interface of their own.
 */
import type { ModelPart } from "../../shared/model_manifest.ts";

/** One execution's output and the device time it took. */
export interface Execution {
  /** `[rows, d_out]` output. */
  output: Float32Array;
  /** Milliseconds the execution itself took (excluding queueing). */
  ms: number;
}

/** Runs model parts on row-major FP32 batches. */
export interface ExpertExecutor {
  /** Active execution provider, e.g. `cpu`, `cuda`, `reference`. */
  readonly provider: string;
  /** Jobs it executes at the same time (its compute capacity, e.g. Worker count). */
  readonly slots: number;
  /** Jobs it accepts at once without queueing them itself (≥ slots when it pipelines). */
  readonly depth: number;
  /** Whether executions run on the caller's thread (main-thread onnxruntime); default false. */
  readonly sharedThread?: boolean;
  /**
   * Runs `part` on `input` (`[rows, d_in]`); takes ownership of `input` (it may be
   * transferred to another thread).
   */
  execute(part: ModelPart, input: Float32Array, rows: number): Promise<Execution>;
  /**
   * Residency, for executors that hold per-part state (sessions): make parts ready,
   * release them, ask whether one is ready. Executors without such state omit these:
   * every part is always ready.
   */
  load?(parts: readonly ModelPart[]): Promise<void>;
  unload?(parts: readonly ModelPart[]): Promise<void>;
  isLoaded?(part: ModelPart): boolean;
  /** Counters since start, for load reports and readiness details. */
  stats(): ExecutorStats;
  /** Releases workers and sessions. */
  close(): Promise<void>;
}

/**
 * Cumulative counters of whatever executes: an executor, a graph runner, simulated devices
 * (one type for all three).
 */
export interface ExecutorStats {
  /** Slots: Workers, the main thread, or devices. */
  slots: number;
  /** Executions finished. */
  executions: number;
  /** Rows executed, as the callers counted them. */
  rows: number;
  /** Milliseconds slots spent executing, summed over slots (device time on devices). */
  busyMs: number;
  /** Executions waiting for a free slot. */
  queued: number;
  /** Executions running (or handed to a slot) now. */
  running: number;
}
