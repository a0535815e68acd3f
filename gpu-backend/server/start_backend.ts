/**
 * @module Wires a backend process: model manifest → executor pool → engine → HTTP.
 * Used by `main.ts` and by tests that run a backend in-process.
 */
import { join } from "node:path";
import type { Config } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";
import { type ModelManifest, ModelManifestSchema } from "../../shared/model_manifest.ts";
import { OrtExecutorPool } from "../execution/ort_executor_pool.ts";
import { MicroBatcher } from "../batching/micro_batcher.ts";
import { policyByName } from "../batching/policies.ts";
import { MoeEngine } from "../moe/engine.ts";
import { createBackendApp } from "./app.ts";

/** A running backend. */
export interface RunningBackend {
  url: string;
  backendId: string;
  executor: OrtExecutorPool;
  batcher: MicroBatcher;
  engine: MoeEngine;
  close(): Promise<void>;
}

/** Reads and validates `moe.json` of a model directory; the error names the field. */
export async function loadManifest(dir: string): Promise<ModelManifest> {
  const path = join(dir, "moe.json");
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new Error(`Cannot load model: cannot read "${path}" (${(error as Error).message})`);
  }
  const parsed = ModelManifestSchema.safeParse(JSON.parse(text));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`Cannot load model: "${path}" field ${issue.path.join(".")}: ${issue.message}`);
  }
  return parsed.data;
}

/** Starts a backend for `config`; resolves once the model is loaded and the port is bound. */
export async function startBackend(config: Config, logger: Logger): Promise<RunningBackend> {
  const manifest = await loadManifest(config.model.dir);
  const started = performance.now();
  const executor = await OrtExecutorPool.create({
    modelDir: config.model.dir,
    manifest,
    workers: config.backend.executors,
    providers: config.backend.execution_providers,
  });
  for (const fallback of executor.fallbacks) {
    logger.warn("execution provider unavailable, falling back", fallback);
  }
  const { batching } = config;
  const batcher = new MicroBatcher({
    executor,
    maxRowsPerBatch: batching.max_rows,
    policy: policyByName(batching.policy, {
      min: batching.min,
      max: batching.max,
      maxWaitMs: batching.max_wait_ms,
      latencyBudgetMs: batching.latency_budget_ms,
    }),
  });
  const engine = new MoeEngine({
    manifest,
    runner: batcher,
    temperature: config.gate.temperature,
    maxQueuedRows: config.backend.max_queued_rows,
  });
  const backendId = config.backend.id ?? `${config.backend.host}:${config.backend.port}`;
  const app = createBackendApp({
    config,
    backendId,
    engine,
    logger,
    readiness: () => ({
      ready: true,
      details: {
        models: [manifest.name],
        execution_provider: executor.provider,
        provider_fallbacks: executor.fallbacks,
        executor: executor.stats(),
        engine: engine.stats(),
        batching: {
          policy: batcher.policy.name,
          window_ms: batcher.windowMs(),
          host_ms_per_execution: batcher.hostMsPerExecution(),
          parts: batcher.stats(),
        },
      },
    }),
  });
  const server = Deno.serve({
    hostname: config.backend.host,
    port: config.backend.port,
    onListen: () => {},
  }, app.fetch);
  const url = `http://${config.backend.host}:${server.addr.port}`;
  logger.info("backend listening", {
    url,
    model: manifest.name,
    execution_provider: executor.provider,
    executors: config.backend.executors,
    load_ms: Math.round(performance.now() - started),
  });
  return {
    url,
    backendId,
    executor,
    batcher,
    engine,
    async close() {
      await server.shutdown();
      await executor.close();
    },
  };
}
