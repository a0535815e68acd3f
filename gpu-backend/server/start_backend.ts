/**
 * @module Wires a backend process: model manifest → executor → micro-batcher →
 * expert dispatcher (placement + peer channels) → engine → HTTP. Used by `main.ts` and
 * by tests that run a backend in-process.
 */
import { join } from "node:path";
import type { Config } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";
import { type ModelManifest, ModelManifestSchema } from "../../shared/model_manifest.ts";
import { type BackendExecutor, createExecutor } from "../execution/create_executor.ts";
import { acceptPeer } from "../peer/peer_server.ts";
import { PeerRegistry } from "../peer/peer_registry.ts";
import { ExpertDispatcher } from "../placement/expert_dispatcher.ts";
import { PlacementState } from "../placement/placement_state.ts";
import { MicroBatcher } from "../batching/micro_batcher.ts";
import { policyByName } from "../batching/policies.ts";
import { MoeEngine } from "../moe/engine.ts";
import { createBackendApp } from "./app.ts";
import { buildLoadReport } from "./load_report.ts";

/** A running backend. */
export interface RunningBackend {
  url: string;
  backendId: string;
  executor: BackendExecutor;
  placement: PlacementState;
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
  const startedAt = Date.now();
  const executor = await createExecutor({
    kind: config.backend.executor,
    modelDir: config.model.dir,
    manifest,
    workers: config.backend.executors,
    providers: config.backend.execution_providers,
    simulated: {
      fixedMs: config.backend.simulated.fixed_ms,
      perRowMs: config.backend.simulated.per_row_ms,
    },
  });
  for (const fallback of executor.fallbacks ?? []) {
    logger.warn("execution provider unavailable, falling back", fallback);
  }
  if (executor.provider === "simulated") {
    logger.warn("SIMULATED executor: outputs are not model outputs (benchmarks only)", {
      fixed_ms: config.backend.simulated.fixed_ms,
      per_row_ms: config.backend.simulated.per_row_ms,
    });
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
  const backendId = config.backend.id ?? `${config.backend.host}:${config.backend.port}`;
  const placement = new PlacementState({ manifest, backendId, executor, logger });
  const peers = new PeerRegistry({ selfId: backendId, token: config.auth.internal_token, logger });
  const dispatcher = new ExpertDispatcher({
    selfId: backendId,
    local: batcher,
    placement,
    peer: (id) => peers.get(id),
    onUnreachable: config.expert_balancer.on_unreachable,
  });
  const engine = new MoeEngine({
    manifest,
    runner: dispatcher,
    temperature: config.gate.temperature,
    maxQueuedRows: config.backend.max_queued_rows,
  });
  const app = createBackendApp({
    config,
    backendId,
    engine,
    logger,
    placement,
    peers,
    executionProvider: executor.provider,
    loadReport: () => {
      const { rss, heapUsed } = Deno.memoryUsage();
      return buildLoadReport({
        backendId,
        manifest,
        executor,
        batcher,
        engine,
        startedAt,
        now: Date.now(),
        memory: { rssBytes: rss, heapUsedBytes: heapUsed },
      });
    },
    readiness: () => ({
      ready: true,
      details: {
        models: [manifest.name],
        execution_provider: executor.provider,
        provider_fallbacks: executor.fallbacks ?? [],
        placement: {
          active: placement.active?.version ?? null,
          staged: placement.staged?.version ?? null,
          cold_starts: placement.coldStarts,
          dispatch: dispatcher.counters,
        },
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
  const peerDeps = {
    backendId,
    token: config.auth.internal_token,
    logger,
    runLocal: (layer: number, expert: number, input: Float32Array, rows: number) =>
      dispatcher.runLocal({ kind: "expert", layer, expert }, input, rows),
  };
  const server = Deno.serve({
    hostname: config.backend.host,
    port: config.backend.port,
    onListen: () => {},
  }, (request) => {
    // The expert channel is a WebSocket; its first frame carries the internal token.
    if (
      request.headers.get("upgrade")?.toLowerCase() === "websocket" &&
      new URL(request.url).pathname === "/v2/peer"
    ) {
      return acceptPeer(request, peerDeps);
    }
    return app.fetch(request);
  });
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
    placement,
    batcher,
    engine,
    async close() {
      peers.closeAll();
      await server.shutdown();
      await executor.close();
    },
  };
}
