/**
 * @module Wires a backend process: model manifest → onnxruntime runner (or, simulated,
 * the simulated layer runner: real gates, simulated device time) → layer
 * executables + layer batcher + layer dispatcher (the layer path), or per-part
 * executor → micro-batcher → expert dispatcher (the per-expert path; also the on-demand
 * path of the layer path) → placement + peer channels → engine → HTTP. The executor comes
 * from `backend_executor.ts`; the load report, `/metrics` and readiness from
 * `backend_status.ts`. Used by `main.ts` and by tests that run a backend in-process.
 */
import { join } from "node:path";
import type { BackendConfig } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";
import { type ModelManifest, ModelManifestSchema } from "../../shared/model_manifest.ts";
import type { BackendExecutor } from "../execution/create_executor.ts";
import { acceptPeer } from "../peer/peer_server.ts";
import type { PeerLayerData } from "../peer/peer_protocol.ts";
import { PeerRegistry } from "../peer/peer_registry.ts";
import type { MicroBatcher } from "../batching/micro_batcher.ts";
import { buildBackendEngine, type LayerMachinery } from "../engine/backend_engine.ts";
import type { MoeEngine } from "../engine/engine.ts";
import type { PlacementState } from "../placement/placement_state.ts";
import { createBackendApp } from "./app.ts";
import { openExecutor } from "./backend_executor.ts";
import {
  backendMetrics,
  type BackendStatusParts,
  loadReporter,
  readinessDetails,
} from "./backend_status.ts";
import { PhaseHistogram } from "../metrics/phase_histogram.ts";
import { BACKEND_PHASES } from "../timing/request_timing.ts";
import { LoopMonitor } from "../resources/loop_monitor.ts";
import { InputFaults } from "../../shared/input_faults.ts";
import { inputFaultMetrics } from "../../shared/metrics/input_fault_metrics.ts";
import { closeWhenAsked, serveErrorHandler } from "../../shared/serve_hooks.ts";
import { startupResidency } from "../residency/startup_residency.ts";
import { countingHandler, NetCounter } from "../resources/net_counter.ts";
import { NvidiaSmiSampler } from "../resources/nvidia_smi.ts";
import { ownGpu } from "../resources/own_gpu.ts";

/** A running backend. */
export interface RunningBackend {
  url: string;
  backendId: string;
  executor: BackendExecutor;
  placement: PlacementState;
  /** The per-part micro-batcher (all experts on the per-expert path; on-demand ones otherwise). */
  batcher: MicroBatcher;
  /** The layer path's batcher and executables; absent on the per-expert path. */
  layers?: LayerMachinery;
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

/** What the backend reads from its process environment (`main.ts` passes it). */
export interface BackendEnvironment {
  /** `CUDA_VISIBLE_DEVICES`: which physical GPUs CUDA numbers from 0 (unset: all). */
  cudaVisibleDevices?: string | undefined;
}

/** Starts a backend for `config`; resolves once the model is loaded and the port is bound. */
export async function startBackend(
  config: BackendConfig,
  logger: Logger,
  environment: BackendEnvironment = {},
): Promise<RunningBackend> {
  const manifest = await loadManifest(config.model.dir);
  const started = performance.now();
  const startedAt = Date.now();
  // Expert residency: under backend.memory_budget_mb only part of the experts start warm.
  const startup = await startupResidency({
    modelDir: config.model.dir,
    manifest,
    memoryBudgetMb: config.backend.memory_budget_mb,
  });
  const layerPath = config.backend.execution === "layer";
  const executor = await openExecutor(config, { manifest, startup, logger });
  const backendId = config.backend.id ?? `${config.backend.host}:${config.backend.port}`;
  const { net, accelerator, loop } = startResourceMeters(config, {
    provider: executor.provider,
    environment,
    logger,
  });
  const peers = new PeerRegistry({
    selfId: backendId,
    token: config.auth.internal_token,
    logger,
    net,
  });
  const built = await buildBackendEngine({
    manifest,
    modelDir: config.model.dir,
    executor,
    logger,
    backendId,
    startup,
    execution: layerPath ? "layer" : "expert",
    batching: config.batching,
    temperature: config.gate.temperature,
    maxQueuedRows: config.backend.max_queued_rows,
    onUnreachable: config.expert_balancer.on_unreachable,
    overlapHops: config.backend.overlap_hops,
    peer: (id) => peers.get(id),
  });
  // The peer channel's cost on this side: frames served for peers (see peer_server.ts).
  const served = { frames: 0, rows: 0, cpuMs: 0 };
  const status = { config, manifest, backendId, executor, built, net, accelerator, loop };
  const server = serveBackend({ ...status, peers, served, startedAt }, logger);
  const url = `http://${config.backend.host}:${server.addr.port}`;
  const { engine, placement, batcher, layers } = built;
  logger.info("backend listening", {
    event: "start",
    url,
    model: manifest.name,
    execution_provider: executor.provider,
    executors: config.backend.executors,
    execution: layers ? "layer" : "expert",
    load_ms: Math.round(performance.now() - started),
  });
  return {
    url,
    backendId,
    executor,
    placement,
    batcher,
    ...(layers ? { layers } : {}),
    engine,
    async close() {
      peers.closeAll();
      loop.stop();
      await accelerator.stop();
      await server.shutdown();
      await executor.close();
    },
  };
}

/**
 * Node resources: body bytes counted at the HTTP handler and the peer channel;
 * this backend's own GPU read in the background (never on the report path), so power
 * is that device's, not the host's; a backend not on CUDA has no accelerator reading.
 */
function startResourceMeters(
  config: BackendConfig,
  deps: { provider: string; environment: BackendEnvironment; logger: Logger },
): { net: NetCounter; accelerator: NvidiaSmiSampler; loop: LoopMonitor } {
  const net = new NetCounter();
  const gpu = ownGpu({
    provider: deps.provider,
    deviceId: config.backend.cuda.device_id,
    cudaVisibleDevices: deps.environment.cudaVisibleDevices,
  });
  const accelerator = new NvidiaSmiSampler({
    logger: deps.logger,
    ...(gpu === null ? {} : { device: gpu }),
  });
  if (gpu !== null) void accelerator.start();
  // The main thread's busy share (event-loop probe) for the router's saturation signal.
  const loop = new LoopMonitor();
  loop.start();
  return { net, accelerator, loop };
}

/**
 * Serves the backend's app and its peer channel on `backend.host:backend.port`; body bytes
 * in and out are counted for the load report's node resources.
 */
function serveBackend(parts: BackendStatusParts, logger: Logger): Deno.HttpServer<Deno.NetAddr> {
  const { config, manifest, backendId, executor, built, peers, net, served } = parts;
  const { engine, placement, dispatcher, layers } = built;
  const phases = new PhaseHistogram(BACKEND_PHASES);
  const loadReport = loadReporter(parts);
  // `/metrics`: every value is read from the counters above when Prometheus scrapes.
  const metrics = backendMetrics(parts, { loadReport, phases });
  // Clients that vanish mid-body or send too slowly: counted, never logged as errors.
  const inputFaults = new InputFaults();
  inputFaultMetrics(metrics.registry, inputFaults);
  const app = createBackendApp({
    inputFaults,
    config,
    backendId,
    engine,
    logger,
    placement,
    peers,
    executionProvider: executor.provider,
    loadReport,
    metrics,
    phases,
    readiness: () => ({ ready: true, details: readinessDetails(parts) }),
  });
  const peerDeps = {
    backendId,
    token: config.auth.internal_token,
    logger,
    net,
    runLocal: (layer: number, expert: number, input: Float32Array, rows: number) =>
      dispatcher.runLocal({ kind: "expert", layer, expert }, input, rows),
    width: manifest.d_model,
    served,
    ...(layers ? { runLayerItems: (items: PeerLayerData[]) => layers.peerItems.run(items) } : {}),
  };
  const handler = countingHandler((request: Request) => {
    // The expert channel is a WebSocket; its first frame carries the internal token.
    if (
      request.headers.get("upgrade")?.toLowerCase() === "websocket" &&
      new URL(request.url).pathname === "/v2/peer"
    ) {
      return acceptPeer(request, peerDeps);
    }
    return app.fetch(request);
  }, net);
  return Deno.serve({
    hostname: config.backend.host,
    port: config.backend.port,
    onListen: () => {},
    // Deliberate closes (408 on a slow body) log nothing; other errors one JSON line.
    onError: serveErrorHandler(logger),
  }, closeWhenAsked(handler));
}
