/**
 * @module Assembles a backend's inference machinery from its executor: the layer path
 * (layer executables → layer batcher → layer dispatcher) or the per-expert path
 * (micro-batcher → expert dispatcher), placement and the engine in front. Used by
 * `startBackend`, and by benchmarks and tests that run an engine in process.
 */
import type { Config } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";
import type { ModelManifest } from "../../shared/model_manifest.ts";
import type { QueueBatchStats } from "../batching/batch_queues.ts";
import { MicroBatcher } from "../batching/micro_batcher.ts";
import { policyByName } from "../batching/policies.ts";
import type { BackendExecutor } from "../execution/create_executor.ts";
import type { ExecutorStats } from "../execution/executor.ts";
import type { GraphRunner } from "../execution/graph_runner.ts";
import { LayerBatcher } from "../layer/layer_batcher.ts";
import { PeerItemRunner } from "../layer/peer_item_runner.ts";
import { LayerDispatcher } from "../layer/layer_dispatcher.ts";
import { LayerExecutables } from "../layer/layer_executables.ts";
import { mergePartStats } from "../layer/merge_part_stats.ts";
import { MoeEngine } from "./engine.ts";
import type { PeerClient } from "../peer/peer_client.ts";
import type { OverlapMode } from "../layer/layer_dispatcher.ts";
import { ExpertDispatcher } from "../placement/expert_dispatcher.ts";
import { PlacementState } from "../placement/placement_state.ts";
import type { StartupResidency } from "../residency/startup_residency.ts";

/** Options of {@linkcode buildBackendEngine}. */
export interface BackendEngineOptions {
  manifest: ModelManifest;
  modelDir: string;
  executor: BackendExecutor;
  logger: Logger;
  backendId: string;
  startup: StartupResidency;
  /** `backend.execution`; the layer path needs an executor with a runner (onnx or simulated). */
  execution: "layer" | "expert";
  batching: Config["batching"];
  temperature: number;
  maxQueuedRows: number;
  onUnreachable: "load_local" | "fail";
  /** `backend.overlap_hops`: when local experts run while peers' rows are in flight; default never. */
  overlapHops?: OverlapMode;
  /** The channel to a peer backend, by id. */
  peer: (id: string) => PeerClient | undefined;
}

/** The layer path's parts: its batcher, executables, entry-side dispatcher and peer side. */
export interface LayerMachinery {
  batcher: LayerBatcher;
  executables: LayerExecutables;
  dispatcher: LayerDispatcher;
  peerItems: PeerItemRunner;
}

/** The assembled machinery, and read-outs of both paths' counters together. */
export interface BackendEngine {
  engine: MoeEngine;
  placement: PlacementState;
  /** Per-part micro-batcher: every expert on the per-expert path, on-demand ones otherwise. */
  batcher: MicroBatcher;
  dispatcher: ExpertDispatcher;
  /** The layer path; absent on the per-expert path. */
  layers?: LayerMachinery;
  /** Executions of everything this backend ran (the runner on the layer path). */
  executorStats(): ExecutorStats;
  /** Per model part (rows, executions, busy time), both paths summed. */
  partStats(): QueueBatchStats[];
  /** Per batching queue (layer queues and part queues). */
  queueStats(): QueueBatchStats[];
}

/** Builds the engine for `options.executor`; resolves once the layer executables are built. */
export async function buildBackendEngine(options: BackendEngineOptions): Promise<BackendEngine> {
  const { manifest, executor, logger, backendId, startup, batching } = options;
  const batcher = new MicroBatcher({
    executor,
    maxRowsPerBatch: batching.max_rows,
    policy: batchingPolicy(batching),
  });
  // Step 1: layer executables (layer path only).
  const runner = options.execution === "layer" ? executor.runner : undefined;
  const executables = runner ? await startExecutables(options, runner) : undefined;
  // Step 2: placement and the per-expert dispatcher (on-demand experts on the layer path).
  const placement = new PlacementState({
    manifest,
    backendId,
    executor,
    logger,
    residency: startup.residency,
    ...(executables ? { layers: executables } : {}),
  });
  await placement.warm(startup.warmAtStart);
  const dispatcher = new ExpertDispatcher({
    selfId: backendId,
    local: batcher,
    placement,
    peer: options.peer,
    onUnreachable: options.onUnreachable,
  });
  // Step 3: the layer batcher and dispatcher, and the engine in front.
  const layers = runner && executables
    ? layerMachinery(options, { runner, executables, placement, dispatcher })
    : undefined;
  const engine = new MoeEngine({
    manifest,
    temperature: options.temperature,
    maxQueuedRows: options.maxQueuedRows,
    ...(layers ? { layers: layers.dispatcher } : { runner: dispatcher }),
  });
  return {
    engine,
    placement,
    batcher,
    dispatcher,
    ...(layers ? { layers } : {}),
    executorStats: () => runner ? runner.stats() : executor.stats(),
    partStats: () =>
      layers ? mergePartStats(layers.batcher.partStats(), batcher.stats()) : batcher.stats(),
    queueStats: () => layers ? [...layers.batcher.stats(), ...batcher.stats()] : batcher.stats(),
  };
}

/** A fresh batching policy of `batching.policy` within the configured bounds. */
function batchingPolicy(batching: Config["batching"]) {
  return policyByName(batching.policy, {
    min: batching.min,
    max: batching.max,
    maxWaitMs: batching.max_wait_ms,
    latencyBudgetMs: batching.latency_budget_ms,
    fillWaitMs: batching.fill_wait_ms,
  });
}

/** Step 1: the layer executables, started with every expert (none under a memory budget). */
async function startExecutables(
  options: BackendEngineOptions,
  runner: GraphRunner,
): Promise<LayerExecutables> {
  const { manifest, logger, startup } = options;
  const executables = new LayerExecutables({
    runner,
    manifest,
    modelDir: options.modelDir,
    logger,
  });
  // Every expert; under a memory budget none until a plan pins some: warm experts
  // outside a plan are per-expert sessions the LRU may evict, as on the per-expert path.
  const all = Array.from({ length: manifest.experts }, (_, expert) => expert);
  await executables.start(
    Array.from({ length: manifest.layers }, () => startup.executorParts ? [] : all),
  );
  return executables;
}

/** Step 3: the layer batcher, the entry-side dispatcher and the peer side over `executables`. */
function layerMachinery(
  options: BackendEngineOptions,
  parts: {
    runner: GraphRunner;
    executables: LayerExecutables;
    placement: PlacementState;
    dispatcher: ExpertDispatcher;
  },
): LayerMachinery {
  const { manifest, backendId, batching } = options;
  const { runner, executables, placement, dispatcher } = parts;
  const layerBatcher = new LayerBatcher({
    runner,
    executables,
    manifest,
    policy: batchingPolicy(batching),
    maxRowsPerBatch: batching.max_rows,
  });
  const layerDispatcher = new LayerDispatcher({
    selfId: backendId,
    manifest,
    batcher: layerBatcher,
    executables,
    placement,
    runPart: (part, input, rows) => dispatcher.runLocal(part, input, rows),
    peer: options.peer,
    onUnreachable: options.onUnreachable,
    overlap: options.overlapHops ?? "never",
  });
  const peerItems = new PeerItemRunner({
    manifest,
    batcher: layerBatcher,
    executables,
    runPart: (part, input, rows) => dispatcher.runLocal(part, input, rows),
    counters: layerDispatcher.counters,
  });
  return { batcher: layerBatcher, executables, dispatcher: layerDispatcher, peerItems };
}
