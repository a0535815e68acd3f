/**
 * @module Builds the backend's executor from configuration: the onnxruntime Worker pool,
 * or the simulated executor (pool-scale benchmarks only; its outputs are not model
 * outputs).
 */
import type { ModelManifest, ModelPart } from "../../shared/model_manifest.ts";
import type { ExpertExecutor } from "./executor.ts";
import { OrtExecutorPool } from "./ort_executor_pool.ts";
import type { OrtProviderSettings, ProviderChoice } from "./ort_session_factory.ts";
import { SimulatedExecutor, type SimulatedTiming } from "./simulated_executor.ts";

/** Options of {@linkcode createExecutor}. */
export interface CreateExecutorOptions {
  /** `onnx` runs the model; `simulated` only spends `simulated` timing per execution. */
  kind: "onnx" | "simulated";
  /** Model directory (read by `onnx` only). */
  modelDir: string;
  manifest: ModelManifest;
  /** Execution slots: Workers for `onnx`, simulated devices for `simulated`. */
  workers: number;
  /** Providers in order of preference (`onnx` only). */
  providers: readonly string[];
  /** Provider options: CUDA device, memory arena (`onnx` only). */
  providerSettings?: OrtProviderSettings;
  /** Device time per execution (and per load); required for `simulated`. */
  simulated?: SimulatedTiming;
  /** Parts loaded at start; default every part (expert residency loads the rest later). */
  parts?: readonly ModelPart[];
}

/** An executor and, for onnxruntime, the providers it fell back from. */
export type BackendExecutor = ExpertExecutor & {
  readonly fallbacks?: ProviderChoice["fallbacks"];
};

/** Creates the configured executor; an `onnx` one has its model parts loaded. */
export async function createExecutor(options: CreateExecutorOptions): Promise<BackendExecutor> {
  switch (options.kind) {
    case "onnx":
      return await OrtExecutorPool.create({
        modelDir: options.modelDir,
        manifest: options.manifest,
        workers: options.workers,
        providers: options.providers,
        ...(options.providerSettings ? { providerSettings: options.providerSettings } : {}),
        ...(options.parts ? { parts: options.parts } : {}),
      });
    case "simulated": {
      if (!options.simulated) {
        throw new TypeError("Cannot create the simulated executor: its timing is missing");
      }
      return new SimulatedExecutor({
        manifest: options.manifest,
        slots: options.workers,
        fixedMs: options.simulated.fixedMs,
        perRowMs: options.simulated.perRowMs,
        loadFixedMs: options.simulated.loadFixedMs ?? 0,
        loadMsPerMb: options.simulated.loadMsPerMb ?? 0,
        ...(options.parts ? { parts: options.parts } : {}),
      });
    }
    default:
      throw new TypeError(
        `Cannot create an executor: unknown kind "${(options as { kind: string }).kind}"`,
      );
  }
}
