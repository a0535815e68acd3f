/**
 * @module The serving set-ups `bench:baseline` compares: an engine in the benchmark's
 * own process, and a backend process with or without a router in front — each for one
 * execution variant (per-expert or layer path; Workers or the main thread).
 */
import { resolveConfig } from "../../../shared/config.ts";
import type { DecodedInferRequest } from "../../../shared/infer_request_codec.ts";
import { silentLogger } from "../../../shared/logger.ts";
import type { ModelManifest } from "../../../shared/model_manifest.ts";
import { createExecutor } from "../../../gpu-backend/execution/create_executor.ts";
import type { ExecutorStats } from "../../../gpu-backend/execution/executor.ts";
import type { LayerWaves } from "../../../gpu-backend/layer/layer_counters.ts";
import { buildBackendEngine } from "../../../gpu-backend/engine/backend_engine.ts";
import { startupResidency } from "../../../gpu-backend/residency/startup_residency.ts";
import { freePort, type PoolProcess, startProcess } from "../../pool/processes.ts";
import { cpuMsOf } from "../cpu_time.ts";
import { emptyResult, type LoadResult } from "../load_generator.ts";

/** One way of executing the model. */
export interface Variant {
  name: string;
  execution: "layer" | "expert";
  /** Executor Workers; 0 = onnxruntime on the main thread. */
  executors: number;
  /** `batching.max` (groups per execution) when not the default. */
  batchingMax?: number;
  /** `batching.fill_wait_ms` (with `max_wait_ms` raised to it when above) when not the default. */
  fillWaitMs?: number;
}

/** `SWITCHYARD_*` settings of a variant beyond the execution itself. */
function variantEnv(variant: Variant): Record<string, string> {
  return {
    ...(variant.batchingMax ? { SWITCHYARD_BATCHING__MAX: String(variant.batchingMax) } : {}),
    ...(variant.fillWaitMs
      ? {
        SWITCHYARD_BATCHING__FILL_WAIT_MS: String(variant.fillWaitMs),
        SWITCHYARD_BATCHING__MAX_WAIT_MS: String(Math.max(2, variant.fillWaitMs)),
      }
      : {}),
  };
}

/** An engine running in this process. */
export interface InProcessEngine {
  infer(tokens: Float32Array, rows: number): Promise<unknown>;
  /** Executions and busy time of everything it ran. */
  executorStats(): ExecutorStats;
  /** Per layer: how full the layer path's executions ran (empty on the per-expert path). */
  waves(): LayerWaves[];
  close(): Promise<void>;
}

/** Builds `variant`'s engine in this process (default batching, CPU provider). */
export async function inProcessEngine(
  variant: Variant,
  modelDir: string,
  manifest: ModelManifest,
): Promise<InProcessEngine> {
  const config = resolveConfig({ env: variantEnv(variant) });
  const startup = await startupResidency({ modelDir, manifest });
  const executor = await createExecutor({
    kind: "onnx",
    modelDir,
    manifest,
    workers: variant.executors,
    providers: ["cpu"],
    ...(variant.execution === "layer" ? { parts: [] } : {}),
  });
  const built = await buildBackendEngine({
    manifest,
    modelDir,
    executor,
    logger: silentLogger,
    backendId: "bench",
    startup,
    execution: variant.execution,
    batching: config.batching,
    temperature: 1,
    maxQueuedRows: 1 << 20,
    onUnreachable: "load_local",
    peer: () => undefined,
  });
  return {
    infer: (tokens, rows) => built.engine.infer(tokens, rows),
    executorStats: built.executorStats,
    waves: () => built.layers?.batcher.waves() ?? [],
    close: () => executor.close(),
  };
}

/** Closed loop of `clients` callers on an in-process engine; CPU of this process. */
export async function inProcessLoop(
  engine: InProcessEngine,
  requests: readonly DecodedInferRequest[],
  clients: number,
  durationS: number,
): Promise<
  { result: LoadResult; cpuMs: number; busyMs: number; executions: number; waves: LayerWaves[] }
> {
  const result = emptyResult();
  const cpuBefore = cpuMsOf(["self"]);
  const statsBefore = engine.executorStats();
  const wavesBefore = engine.waves();
  const t0 = performance.now();
  let index = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (performance.now() - t0 < durationS * 1000) {
      const request = requests[index++ % requests.length]!;
      const started = performance.now();
      result.sent++;
      await engine.infer(request.tokens, request.rows);
      result.ok++;
      result.rows += request.rows;
      result.latencies.push(performance.now() - started);
    }
  }));
  result.seconds = (performance.now() - t0) / 1000;
  const statsAfter = engine.executorStats();
  return {
    result,
    cpuMs: cpuMsOf(["self"]) - cpuBefore,
    busyMs: statsAfter.busyMs - statsBefore.busyMs,
    executions: statsAfter.executions - statsBefore.executions,
    waves: diffWaves(engine.waves(), wavesBefore),
  };
}

/** A backend process and a router in front of it. */
export interface ServingProcesses {
  backend: PoolProcess;
  router: PoolProcess;
  close(): Promise<void>;
}

/** Starts `variant` as a backend process and a router process on loopback. */
export async function startServing(
  variant: Variant,
  modelDir: string,
  token: string,
): Promise<ServingProcesses> {
  const common = benchEnv(modelDir, token);
  const backend = await startBenchBackend(common, token, {
    SWITCHYARD_BACKEND__EXECUTORS: String(variant.executors),
    SWITCHYARD_BACKEND__EXECUTION: variant.execution,
    ...variantEnv(variant),
  });
  const router = await startBenchRouter(common, backend.url).catch(async (error) => {
    await backend.kill();
    throw error;
  });
  return {
    backend,
    router,
    async close() {
      await router.kill();
      await backend.kill();
    },
  };
}

/** The backend's readiness details (executor counters, layer executables). */
export async function readiness(
  url: string,
  token: string,
): Promise<
  {
    executor: ExecutorStats;
    layers?: { build_ms: number; experts: number }[];
    waves?: LayerWaves[];
  }
> {
  const response = await fetch(`${url}/v2/health/ready`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return (await response.json()).details;
}

/** The environment every benchmark process shares: model, token, quiet logs, state in memory. */
export function benchEnv(modelDir: string, token: string): Record<string, string> {
  return {
    SWITCHYARD_MODEL__DIR: modelDir,
    SWITCHYARD_AUTH__INTERNAL_TOKEN: token,
    SWITCHYARD_LOG__LEVEL: "warn",
    SWITCHYARD_LOG__DIR: "",
    SWITCHYARD_STATE__KV: ":memory:",
  };
}

/** Starts one CPU backend process on a free loopback port. */
export async function startBenchBackend(
  common: Record<string, string>,
  token: string,
  env: Record<string, string> = {},
): Promise<PoolProcess> {
  const port = freePort();
  return await startProcess("gpu-backend/main.ts", {
    url: `http://127.0.0.1:${port}`,
    token,
    env: {
      ...common,
      SWITCHYARD_BACKEND__PORT: String(port),
      SWITCHYARD_BACKEND__ID: "bench-backend",
      SWITCHYARD_BACKEND__EXECUTION_PROVIDERS: '["cpu"]',
      ...env,
    },
  });
}

/** Starts one router process in front of `backendUrl` on a free loopback port. */
export async function startBenchRouter(
  common: Record<string, string>,
  backendUrl: string,
  env: Record<string, string> = {},
  cwd?: string,
): Promise<PoolProcess> {
  const port = freePort();
  return await startProcess("router/main.ts", {
    url: `http://127.0.0.1:${port}`,
    ...(cwd !== undefined ? { cwd } : {}),
    env: {
      ...common,
      SWITCHYARD_ROUTER__HOST: "127.0.0.1",
      SWITCHYARD_ROUTER__PORT: String(port),
      SWITCHYARD_ROUTER__BACKENDS: JSON.stringify([backendUrl]),
      ...env,
    },
  });
}

/** Per-layer wave counters accumulated between two readings. */
export function diffWaves(
  after: readonly LayerWaves[],
  before: readonly LayerWaves[],
): LayerWaves[] {
  return after.map((w, i) => {
    const b = before[i];
    return {
      layer: w.layer,
      executions: w.executions - (b?.executions ?? 0),
      rows: w.rows - (b?.rows ?? 0),
      assignments: w.assignments - (b?.assignments ?? 0),
      expertSlots: w.expertSlots - (b?.expertSlots ?? 0),
    };
  });
}
