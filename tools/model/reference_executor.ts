/**
 * @module The pure-TypeScript executor: implements the backend's `ExpertExecutor`
 * interface with the reference math over the same ONNX weights. For tests (the
 * executor contract, engine tests without Workers); never used in serving.
 */
import { join } from "node:path";
import {
  type ModelManifest,
  type ModelPart,
  modelPartKey,
  modelPartPath,
} from "../../shared/model_manifest.ts";
import type {
  Execution,
  ExecutorStats,
  ExpertExecutor,
} from "../../gpu-backend/execution/executor.ts";
import { expertWeightsFrom, gateWeightsFrom, loadOnnxInitializers } from "./onnx_weights.ts";
import { expertOutput, gateLogits } from "./reference_math.ts";

/** Executes model parts with float64 reference math, one at a time. */
export class ReferenceExecutor implements ExpertExecutor {
  readonly provider = "reference";
  readonly slots = 1;
  readonly depth = 1;
  readonly #dir: string;
  readonly #manifest: ModelManifest;
  readonly #cache = new Map<string, Awaited<ReturnType<typeof loadOnnxInitializers>>>();
  #executions = 0;
  #rows = 0;
  #busyMs = 0;
  #closed = false;

  constructor(dir: string, manifest: ModelManifest) {
    this.#dir = dir;
    this.#manifest = manifest;
  }

  async execute(part: ModelPart, input: Float32Array, rows: number): Promise<Execution> {
    const started = performance.now();
    if (this.#closed) throw new Error("Cannot run: executor is closed");
    const key = modelPartKey(part);
    let initializers = this.#cache.get(key);
    if (!initializers) {
      initializers = await loadOnnxInitializers(
        join(this.#dir, modelPartPath(this.#manifest, part)),
      );
      this.#cache.set(key, initializers);
    }
    const output = part.kind === "gate"
      ? gateLogits(gateWeightsFrom(initializers), input, rows)
      : expertOutput(expertWeightsFrom(initializers), input, rows, this.#manifest.activation);
    const result = Float32Array.from(output);
    const ms = performance.now() - started;
    this.#executions++;
    this.#rows += rows;
    this.#busyMs += ms;
    return { output: result, ms };
  }

  stats(): ExecutorStats {
    return {
      slots: 1,
      executions: this.#executions,
      rows: this.#rows,
      busyMs: this.#busyMs,
      queued: 0,
      running: 0,
    };
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }
}
