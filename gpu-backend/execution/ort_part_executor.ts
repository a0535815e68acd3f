/**
 * @module The per-expert executor: one onnxruntime session per model part (a gate, a
 * routed expert, a shared expert), run on a {@linkcode GraphRunner} — the Workers or
 * the main thread. The layer executables replace it for hosted experts; it remains the
 * path for experts loaded on demand and the old baseline of `bench:baseline`.
 */
import { join } from "node:path";
import {
  listModelParts,
  type ModelManifest,
  type ModelPart,
  modelPartKey,
  modelPartPath,
  ONNX_INPUT_NAME,
  ONNX_OUTPUT_NAME,
} from "../../shared/model_manifest.ts";
import type { Execution, ExecutorStats, ExpertExecutor } from "./executor.ts";
import type { GraphRunner } from "./graph_runner.ts";
import type { OrtProviderSettings } from "./ort_session_factory.ts";
import { OrtInlineRunner } from "./ort_inline_runner.ts";
import { OrtWorkerRunner } from "./ort_worker_runner.ts";

/** Options of {@linkcode OrtPartExecutor.create}. */
export interface OrtPartExecutorOptions {
  modelDir: string;
  manifest: ModelManifest;
  /** Worker count (execution slots); 0 runs sessions on the calling thread. */
  workers: number;
  /** Providers in order of preference, e.g. `["cuda", "cpu"]`. */
  providers: readonly string[];
  /** Provider options (CUDA device, memory arena). */
  providerSettings?: OrtProviderSettings;
  /** Parts to load at start; default every part of the model. */
  parts?: readonly ModelPart[];
}

/** The runner `backend.executors` asks for: Workers, or the main thread when 0. */
export async function createOrtRunner(options: {
  modelDir: string;
  manifest: ModelManifest;
  workers: number;
  providers: readonly string[];
  providerSettings?: OrtProviderSettings;
}): Promise<GraphRunner> {
  const probe = await Deno.readFile(
    join(options.modelDir, modelPartPath(options.manifest, { kind: "gate", layer: 0 })),
  );
  return options.workers === 0
    ? await OrtInlineRunner.create(probe, options.providers, options.providerSettings)
    : await OrtWorkerRunner.create(
      probe,
      options.providers,
      options.workers,
      options.providerSettings,
    );
}

/** Per-part sessions (`L0/E3`, `L1/gate` …) on a graph runner. */
export class OrtPartExecutor implements ExpertExecutor {
  readonly runner: GraphRunner;
  readonly #modelDir: string;
  readonly #manifest: ModelManifest;
  readonly #loaded = new Set<string>();
  #ownsRunner = false;
  #executions = 0;
  #rows = 0;
  #busyMs = 0;
  #closed = false;

  /** Per-part sessions on `runner` (shared with the layer executables; not owned). */
  constructor(runner: GraphRunner, options: { modelDir: string; manifest: ModelManifest }) {
    this.runner = runner;
    this.#modelDir = options.modelDir;
    this.#manifest = options.manifest;
  }

  /** Starts its own runner and loads the parts (closing it closes the runner). */
  static async create(options: OrtPartExecutorOptions): Promise<OrtPartExecutor> {
    const runner = await createOrtRunner(options);
    const executor = new OrtPartExecutor(runner, options);
    executor.#ownsRunner = true;
    try {
      await executor.load(options.parts ?? listModelParts(options.manifest));
    } catch (error) {
      await executor.close();
      throw error;
    }
    return executor;
  }

  get provider(): string {
    return this.runner.provider;
  }

  get slots(): number {
    return this.runner.slots;
  }

  get depth(): number {
    return this.runner.depth;
  }

  get sharedThread(): boolean {
    return this.runner.sharedThread;
  }

  /** Providers that failed before {@linkcode provider} worked. */
  get fallbacks(): GraphRunner["fallbacks"] {
    return this.runner.fallbacks;
  }

  /** Loads parts (no-op for parts already loaded). */
  async load(parts: readonly ModelPart[]): Promise<void> {
    const missing = parts.filter((part) => !this.#loaded.has(modelPartKey(part)));
    await Promise.all(missing.map(async (part) => {
      const key = modelPartKey(part);
      await this.runner.load(key, {
        path: join(this.#modelDir, modelPartPath(this.#manifest, part)),
      });
      this.#loaded.add(key);
    }));
  }

  /** Releases the sessions of parts. */
  async unload(parts: readonly ModelPart[]): Promise<void> {
    const keys = parts.map(modelPartKey).filter((key) => this.#loaded.has(key));
    for (const key of keys) this.#loaded.delete(key);
    await Promise.all(keys.map((key) => this.runner.unload(key)));
  }

  /** Whether a part is loaded. */
  isLoaded(part: ModelPart): boolean {
    return this.#loaded.has(modelPartKey(part));
  }

  async execute(part: ModelPart, input: Float32Array, rows: number): Promise<Execution> {
    if (this.#closed) throw new Error("Cannot run: executor is closed");
    const key = modelPartKey(part);
    if (!this.#loaded.has(key)) throw new Error(`Cannot run "${key}": part is not loaded`);
    const cols = rows > 0 ? input.length / rows : this.#manifest.d_model;
    const { outputs, ms } = await this.runner.run(
      key,
      { [ONNX_INPUT_NAME]: { type: "float32", data: input, dims: [rows, cols] } },
      [ONNX_OUTPUT_NAME],
      rows,
    );
    this.#executions++;
    this.#rows += rows;
    this.#busyMs += ms;
    return { output: outputs[ONNX_OUTPUT_NAME]!, ms };
  }

  stats(): ExecutorStats {
    const runner = this.runner.stats();
    return {
      slots: runner.slots,
      executions: this.#executions,
      rows: this.#rows,
      busyMs: this.#busyMs,
      queued: runner.queued,
      running: runner.running,
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#ownsRunner) await this.runner.close();
  }
}
