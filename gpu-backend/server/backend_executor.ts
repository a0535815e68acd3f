/**
 * @module The backend's executor, as configured: onnxruntime (or simulated device time)
 * with the configured execution providers. Both executors take the layer path unless
 * `execution: expert`; a simulated one runs it on a simulated layer runner (gates real,
 * layer executions simulated). Provider fallbacks and a simulated executor are logged.
 */
import type { BackendConfig } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";
import type { ModelManifest } from "../../shared/model_manifest.ts";
import { type BackendExecutor, createExecutor } from "../execution/create_executor.ts";
import { SimulatedLayerRunner } from "../layer/simulated_layer_runner.ts";
import type { StartupResidency } from "../residency/startup_residency.ts";

/** Creates the executor `config` asks for over the model `manifest`. */
export async function openExecutor(
  config: BackendConfig,
  deps: { manifest: ModelManifest; startup: StartupResidency; logger: Logger },
): Promise<BackendExecutor> {
  const { manifest, startup, logger } = deps;
  const layerPath = config.backend.execution === "layer";
  const simulated = {
    fixedMs: config.backend.simulated.fixed_ms,
    perRowMs: config.backend.simulated.per_row_ms,
    perExpertMs: config.backend.simulated.per_expert_ms,
    loadFixedMs: config.backend.simulated.load_fixed_ms,
    loadMsPerMb: config.backend.simulated.load_ms_per_mb,
  };
  const executor = await createExecutor({
    kind: config.backend.executor,
    modelDir: config.model.dir,
    manifest,
    workers: config.backend.executors,
    providers: config.backend.execution_providers,
    providerSettings: {
      cudaDeviceId: config.backend.cuda.device_id,
      memoryArena: config.backend.memory_arena,
    },
    simulated,
    ...(layerPath
      ? {
        layerRunner: (devices) =>
          new SimulatedLayerRunner({ manifest, devices, timing: simulated }),
      }
      : {}),
    // On the layer path per-part sessions load only on demand.
    ...(layerPath ? { parts: [] } : startup.executorParts ? { parts: startup.executorParts } : {}),
  });
  for (const fallback of executor.fallbacks ?? []) {
    logger.warn("execution provider unavailable, falling back", fallback);
  }
  if (executor.provider === "simulated") {
    logger.warn("SIMULATED executor: outputs are not model outputs (benchmarks only)", {
      fixed_ms: config.backend.simulated.fixed_ms,
      per_row_ms: config.backend.simulated.per_row_ms,
      per_expert_ms: config.backend.simulated.per_expert_ms,
      execution: layerPath ? "layer" : "expert",
    });
  }
  return executor;
}
