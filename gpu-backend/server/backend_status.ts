/**
 * @module What a running backend says about itself, all read from its counters when asked:
 * the load report it sends the router, `/metrics` (scraped by Prometheus) and the details
 * of `/v2/health/ready`. Both execution paths' counters are read together.
 */
import type { BackendConfig } from "../../shared/config.ts";
import type { LoadReport } from "../../shared/load_report.ts";
import type { ModelManifest } from "../../shared/model_manifest.ts";
import { ROUTER_VERSION as SWITCHYARD_VERSION } from "../../shared/version.ts";
import type { BackendEngine } from "../engine/backend_engine.ts";
import type { BackendExecutor } from "../execution/create_executor.ts";
import { BackendMetrics } from "../metrics/backend_metrics.ts";
import type { PhaseHistogram } from "../metrics/phase_histogram.ts";
import type { BackendPhase } from "../timing/request_timing.ts";
import type { PeerRegistry } from "../peer/peer_registry.ts";
import type { LoopMonitor } from "../resources/loop_monitor.ts";
import type { NetCounter } from "../resources/net_counter.ts";
import type { NvidiaSmiSampler } from "../resources/nvidia_smi.ts";
import { readResources } from "../resources/resource_meter.ts";
import { buildLoadReport, hostReport, peerReport } from "./load_report.ts";

/** The parts of a backend its status reads. */
export interface BackendStatusParts {
  config: BackendConfig;
  manifest: ModelManifest;
  backendId: string;
  executor: BackendExecutor;
  built: BackendEngine;
  net: NetCounter;
  accelerator: NvidiaSmiSampler;
  loop: LoopMonitor;
  peers: PeerRegistry;
  /** The peer channel's cost on this side: frames served for peers. */
  served: { frames: number; rows: number; cpuMs: number };
  /** Wall-clock start (ms). */
  startedAt: number;
}

/** What the load report, metrics and readiness read: both paths' counters together. */
function executorView(parts: BackendStatusParts) {
  return { provider: parts.executor.provider, stats: parts.built.executorStats };
}

/** The largest routed expert: the router's planner sizes slots within the budget by it. */
function largestExpertBytes(parts: BackendStatusParts): number {
  const { manifest, built: { placement } } = parts;
  let largestExpert = 0;
  for (let layer = 0; layer < manifest.layers; layer++) {
    for (let expert = 0; expert < manifest.experts; expert++) {
      largestExpert = Math.max(largestExpert, placement.residency.bytesOf(layer, expert));
    }
  }
  return largestExpert;
}

/** The backend's load report, built anew on each call. */
export function loadReporter(parts: BackendStatusParts): () => LoadReport {
  const { built, peers, served } = parts;
  const { engine, placement, batcher, layers } = built;
  const largestExpert = largestExpertBytes(parts);
  const executor = executorView(parts);
  return () => {
    const { rss, heapUsed } = Deno.memoryUsage();
    return buildLoadReport({
      backendId: parts.backendId,
      manifest: parts.manifest,
      executor,
      batcher: { stats: built.partStats },
      engine,
      startedAt: parts.startedAt,
      now: Date.now(),
      memory: { rssBytes: rss, heapUsedBytes: heapUsed },
      coldStarts: (key) => placement.coldStartsOf(key),
      resources: readResources({ net: parts.net, accelerator: parts.accelerator }),
      residency: {
        budgetBytes: placement.residency.budgetBytes,
        usedBytes: placement.residency.usedBytes,
        expertBytes: largestExpert,
      },
      host: hostReport(
        parts.loop.counters(),
        built.queueStats(),
        (layers?.batcher ?? batcher).windowMs(),
      ),
      plan: {
        active: placement.active?.version ?? null,
        staged: placement.staged?.version ?? null,
        owner: placement.owner.owner,
      },
      ...(layers ? { peer: peerReport(layers.dispatcher.counters, peers.channels(), served) } : {}),
    });
  };
}

/** `/metrics`: every value is read from the backend's counters when Prometheus scrapes. */
export function backendMetrics(
  parts: BackendStatusParts,
  deps: { loadReport: () => LoadReport; phases: PhaseHistogram<BackendPhase> },
): BackendMetrics {
  const { config, built: { engine, placement } } = parts;
  const executor = executorView(parts);
  return new BackendMetrics({
    version: SWITCHYARD_VERSION,
    expertDetail: config.metrics.expert_detail,
    topExperts: config.metrics.top_experts,
    providerFallbacks: parts.executor.fallbacks?.length ?? 0,
    phases: deps.phases,
    snapshot: () => ({
      report: deps.loadReport(),
      batches: parts.built.queueStats(),
      executor: executor.stats(),
      engine: engine.stats(),
      placement: {
        active: placement.active?.version ?? null,
        staged: placement.staged?.version ?? null,
        coldStarts: placement.coldStarts,
        owner: placement.owner.owner,
        refused: placement.owner.refusals(),
      },
    }),
  });
}

/** The details of `/v2/health/ready`: model, provider, placement, execution and batching. */
export function readinessDetails(parts: BackendStatusParts): Record<string, unknown> {
  const { config, executor, built } = parts;
  const { engine, placement, batcher, dispatcher, layers } = built;
  return {
    models: [parts.manifest.name],
    execution_provider: executor.provider,
    provider_fallbacks: executor.fallbacks ?? [],
    placement: {
      active: placement.active?.version ?? null,
      staged: placement.staged?.version ?? null,
      cold_starts: placement.coldStarts,
      residency: {
        budget_bytes: placement.residency.budgetBytes,
        used_bytes: placement.residency.usedBytes,
        cold_starts: placement.coldStartReport(),
      },
      dispatch: layers ? layers.dispatcher.counters : dispatcher.counters,
    },
    execution: layers ? "layer" : "expert",
    executors: config.backend.executors,
    ...(layers
      ? {
        layers: layers.executables.describe(),
        // Per layer: executions, rows, routed assignments, hosted-expert slots (how full waves run).
        waves: layers.batcher.waves(),
      }
      : {}),
    executor: executorView(parts).stats(),
    engine: engine.stats(),
    // The live routing-only bias (PUT /v2/gate/bias): set or not, largest |b| per layer.
    routing_bias: engine.routingBias(),
    batching: {
      policy: batcher.policy.name,
      window_ms: (layers?.batcher ?? batcher).windowMs(),
      host_ms_per_execution: (layers?.batcher ?? batcher).hostMsPerExecution(),
      parts: built.queueStats(),
    },
  };
}
