/**
 * @module The graph-runner interface: something that holds onnxruntime sessions by key
 * and runs one with named inputs and outputs. Both execution paths sit on it — the
 * per-expert parts (`ort_part_executor.ts`) and the composed layer executables
 * (`gpu-backend/layer/`).
 *
 * Implementations: {@linkcode OrtInlineRunner} runs sessions on the calling (main)
 * thread, one process per core; {@linkcode OrtWorkerRunner} runs them in Deno Workers,
 * one message per execution each way. Which one a backend uses is `backend.executors`
 * (0 = main thread); `deno task bench:baseline` measures both. For benchmarks,
 * `gpu-backend/layer/simulated_layer_runner.ts` runs the gates and simulates the layer
 * executables' device time. All three pass `gpu-backend/layer/layer_runner_contract_test.ts`.
 */
import type { ExecutorStats } from "./executor.ts";

/** One input tensor: row-major data and its shape. */
export type Feed =
  | { type: "float32"; data: Float32Array; dims: readonly number[] }
  | { type: "int32"; data: Int32Array; dims: readonly number[] };

/** Inputs by name. */
export type Feeds = Record<string, Feed>;

/** One execution's float32 outputs by name and the time it took. */
export interface GraphRun {
  outputs: Record<string, Float32Array>;
  /** Milliseconds of the execution itself (excluding queueing for a slot). */
  ms: number;
}

/**
 * What a session is created from: ONNX bytes, or a file path — or, for a runner that
 * does not execute composed graphs ({@linkcode GraphRunner.needsGraphBytes} false), only
 * the size the graph would have.
 */
export type GraphSource = { bytes: Uint8Array } | { path: string } | { size: number };

/** The bytes of a source (read from its path); a `TypeError` for a size-only source. */
export async function graphBytes(source: GraphSource): Promise<Uint8Array> {
  if ("bytes" in source) return source.bytes;
  if ("path" in source) return await Deno.readFile(source.path);
  throw new TypeError("Cannot create a session from a graph's size alone");
}

/** Runs keyed onnxruntime sessions. */
export interface GraphRunner {
  /** Active execution provider (`cpu`, `cuda`). */
  readonly provider: string;
  /** Executions that run at the same time (threads executing sessions). */
  readonly slots: number;
  /** Executions it accepts at once before queueing them itself (≥ slots when it pipelines). */
  readonly depth: number;
  /** Whether executions run on the caller's thread (true for the main-thread runner). */
  readonly sharedThread: boolean;
  /** Providers that failed before {@linkcode provider} worked, with reasons. */
  readonly fallbacks: readonly { provider: string; reason: string }[];
  /**
   * Whether composed layer graphs must be built for it (default true). A runner that
   * only simulates their execution takes their size and spares the CPU of composing.
   */
  readonly needsGraphBytes?: boolean;
  /** Creates the session `key` (on every slot); a key already loaded is replaced. */
  load(key: string, source: GraphSource): Promise<void>;
  /** Releases the session `key` (no-op when absent). */
  unload(key: string): Promise<void>;
  /** Whether `key` is loaded. */
  has(key: string): boolean;
  /**
   * Runs `key` on `feeds`, returning the float32 outputs named in `outputs`; takes
   * ownership of the feeds' buffers (they may be transferred). `rows` is for counters.
   */
  run(key: string, feeds: Feeds, outputs: readonly string[], rows: number): Promise<GraphRun>;
  stats(): ExecutorStats;
  close(): Promise<void>;
}
