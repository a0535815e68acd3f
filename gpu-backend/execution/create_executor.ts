/**
 * @module Builds the backend's executor from configuration: per-part onnxruntime
 * sessions on a graph runner (Workers, or the main thread with `workers: 0`) whose
 * runner the layer executables share, or the simulated executor (pool-scale benchmarks
 * only; its outputs are not model outputs) on simulated devices, with the layer path's
 * simulated runner on the same devices when the caller builds one (`layerRunner`).
 */
import type { ModelManifest, ModelPart } from "../../shared/model_manifest.ts";
import type { ExpertExecutor } from "./executor.ts";
import type { GraphRunner } from "./graph_runner.ts";
import { OrtPartExecutor } from "./ort_part_executor.ts";
import type { OrtProviderSettings, ProviderChoice } from "./ort_session_factory.ts";
import { SimulatedDevices } from "./simulated_devices.ts";
import { SimulatedExecutor, type SimulatedTiming } from "./simulated_executor.ts";

/** Options of {@linkcode createExecutor}. */
export interface CreateExecutorOptions {
  /** `onnx` runs the model; `simulated` only spends `simulated` timing per execution. */
  kind: "onnx" | "simulated";
  /** Model directory (read by `onnx` only). */
  modelDir: string;
  manifest: ModelManifest;
  /** Execution slots: Workers for `onnx` (0: the main thread), simulated devices for `simulated`. */
  workers: number;
  /** Providers in order of preference (`onnx` only). */
  providers: readonly string[];
  /** Provider options: CUDA device, memory arena (`onnx` only). */
  providerSettings?: OrtProviderSettings;
  /** Device time per execution (and per load); required for `simulated`. */
  simulated?: SimulatedTiming;
  /** Parts loaded at start; default every part (expert residency loads the rest later). */
  parts?: readonly ModelPart[];
  /**
   * `simulated` on the layer path: builds the layer runner on the executor's devices
   * (`gpu-backend/layer/simulated_layer_runner.ts`; injected, as execution/ does not
   * import layer/). Without it the simulated executor has no runner: per-expert path only.
   */
  layerRunner?: (devices: SimulatedDevices) => GraphRunner;
}

/** An executor and, for onnxruntime, the providers it fell back from and its runner. */
export type BackendExecutor = ExpertExecutor & {
  readonly fallbacks?: readonly ProviderChoice["fallbacks"][number][];
  /** The onnxruntime graph runner (onnx only): layer executables run on it too. */
  readonly runner?: GraphRunner;
};

/** Creates the configured executor; an `onnx` one has its model parts loaded. */
export async function createExecutor(options: CreateExecutorOptions): Promise<BackendExecutor> {
  switch (options.kind) {
    case "onnx":
      return await OrtPartExecutor.create({
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
      const devices = new SimulatedDevices({ slots: Math.max(1, options.workers) });
      return new SimulatedExecutor({
        manifest: options.manifest,
        slots: devices.slots,
        devices,
        ...(options.layerRunner ? { runner: options.layerRunner(devices) } : {}),
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
