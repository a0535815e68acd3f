/**
 * @module The executor interface: something that runs one ONNX part of a model
 * (a gate, a routed expert or a shared expert) on a batch of rows.
 *
 * Implementations: the onnxruntime Worker pool (production) and the pure-TypeScript
 * reference executor (tests). Both pass `executor_contract_test.ts`.
 */
import type { ModelPart } from "../../shared/model_manifest.ts";

/** Runs model parts on row-major FP32 batches. */
export interface ExpertExecutor {
  /** Active execution provider, e.g. `cpu`, `cuda`, `reference`. */
  readonly provider: string;
  /** Runs `part` on `input` (`[rows, d_in]`) and resolves its output (`[rows, d_out]`). */
  run(part: ModelPart, input: Float32Array, rows: number): Promise<Float32Array>;
  /** Counters since start, for load reports and readiness details. */
  stats(): ExecutorStats;
  /** Releases workers and sessions. */
  close(): Promise<void>;
}

/** Cumulative executor counters. */
export interface ExecutorStats {
  /** Executor slots (Workers). */
  slots: number;
  /** Executions finished. */
  executions: number;
  /** Rows executed. */
  rows: number;
  /** Milliseconds slots spent executing, summed over slots. */
  busyMs: number;
  /** Jobs waiting for a free slot. */
  queued: number;
  /** Jobs executing now. */
  running: number;
}
