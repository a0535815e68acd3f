/**
 * @module Test support: the outputs of the per-expert path (one session per expert, on
 * this thread) for requests, as the baseline the layer path must equal.
 */
import { resolveConfig } from "../../shared/config.ts";
import { silentLogger } from "../../shared/logger.ts";
import { createExecutor } from "../../gpu-backend/execution/create_executor.ts";
import { startupResidency } from "../../gpu-backend/residency/startup_residency.ts";
import { buildBackendEngine } from "../../gpu-backend/engine/backend_engine.ts";
import { loadManifest } from "../../gpu-backend/server/start_backend.ts";

/** Runs every request on an in-process per-expert engine; resolves their outputs. */
export async function perExpertOutputs(
  modelDir: string,
  requests: readonly { tokens: Float32Array; rows: number }[],
): Promise<Float32Array[]> {
  const manifest = await loadManifest(modelDir);
  const executor = await createExecutor({
    kind: "onnx",
    modelDir,
    manifest,
    workers: 0,
    providers: ["cpu"],
  });
  try {
    const { engine } = await buildBackendEngine({
      manifest,
      modelDir,
      executor,
      logger: silentLogger,
      backendId: "per-expert",
      startup: await startupResidency({ modelDir, manifest }),
      execution: "expert",
      batching: resolveConfig({ env: {} }).batching,
      temperature: 1,
      maxQueuedRows: 1 << 16,
      onUnreachable: "load_local",
      peer: () => undefined,
    });
    return await Promise.all(
      requests.map(async (r) => (await engine.infer(r.tokens, r.rows)).output),
    );
  } finally {
    await executor.close();
  }
}
