/**
 * @module Builds the backend's load report (`GET /v2/load`) from the counters its
 * parts already keep: the micro-batcher per part, the executor and the engine per
 * backend. Pure over those snapshots; the caller passes the clock and memory readings.
 *
 * Every hosted part is listed (by default every part of the manifest), with zero
 * counters until it first runs, so a consumer sees complete per-layer expert vectors.
 */
import type { PlanOwner } from "../../shared/plan_owner.ts";
import type {
  HostReport,
  LoadReport,
  PartLoad,
  PeerReport,
  ResidencyReport,
  ResourceReport,
} from "../../shared/load_report.ts";
import {
  listModelParts,
  type ModelManifest,
  type ModelPart,
  modelPartKey,
  parsePartKey,
} from "../../shared/model_manifest.ts";
import type { PartBatchStats } from "../batching/micro_batcher.ts";
import type { ExecutorStats } from "../execution/executor.ts";
import type { EngineStats } from "../engine/engine.ts";

/** Memory readings of the backend process (from `Deno.memoryUsage()`). */
export interface MemoryReading {
  rssBytes: number;
  heapUsedBytes: number;
}

/** What {@linkcode buildLoadReport} reads. */
export interface LoadReportSources {
  backendId: string;
  manifest: ModelManifest;
  /** Parts this backend hosts; default every part of the manifest. */
  parts?: readonly ModelPart[];
  executor: { readonly provider: string; stats(): ExecutorStats };
  batcher: { stats(): PartBatchStats[] };
  engine: { stats(): EngineStats };
  /** When the backend started, ms since the Unix epoch. */
  startedAt: number;
  /** When the report is taken, ms since the Unix epoch. */
  now: number;
  memory: MemoryReading;
  /** Node resources (CPU, network, accelerator); omitted from the report when absent. */
  resources?: ResourceReport;
  /** Host side and queues (event-loop probe, queue delay, execution time). */
  host?: HostReport;
  /** Routed-expert residency (budget, used, largest expert). */
  residency?: ResidencyReport;
  /** Plan versions active and staged here; omitted from the report when absent. */
  plan?: { active: number | null; staged: number | null; owner?: PlanOwner | null };
  /** Peer hops (the layer path); omitted from the report when absent. */
  peer?: PeerReport;
  /** Cold starts of a routed expert by key; when given, every expert part reports them. */
  coldStarts?: (key: string) => { count: number; msSum: number; msMax: number } | undefined;
}

function partLoad(
  part: ModelPart,
  stats: PartBatchStats | undefined,
  coldStarts?: LoadReportSources["coldStarts"],
): PartLoad {
  const cold = part.kind === "expert" && coldStarts
    ? coldStarts(modelPartKey(part)) ?? { count: 0, msSum: 0, msMax: 0 }
    : undefined;
  return {
    part: modelPartKey(part),
    layer: part.layer,
    kind: part.kind,
    expert: part.kind === "gate" ? -1 : part.expert,
    tokens: stats?.rows ?? 0,
    executions: stats?.executions ?? 0,
    busyMs: stats?.executionMsSum ?? 0,
    queueDepth: stats?.queuedGroups ?? 0,
    ...(cold
      ? { coldStarts: cold.count, coldStartMs: cold.msSum, coldStartMaxMs: cold.msMax }
      : {}),
  };
}

/** The backend's load report: cumulative counters since start plus what is queued now. */
export function buildLoadReport(sources: LoadReportSources): LoadReport {
  // Step 1: per part — the hosted parts in order, then any other part the batcher ran
  // (none today), so no counter is ever dropped.
  const byKey = new Map(sources.batcher.stats().map((stats) => [stats.part, stats]));
  const hosted = sources.parts ?? listModelParts(sources.manifest);
  const parts = hosted.map((part) => {
    const key = modelPartKey(part);
    const load = partLoad(part, byKey.get(key), sources.coldStarts);
    byKey.delete(key);
    return load;
  });
  for (const [key, stats] of byKey) {
    const part = parsePartKey(key);
    if (part !== undefined) parts.push(partLoad(part, stats, sources.coldStarts));
  }
  // Step 2: per backend.
  const executor = sources.executor.stats();
  const engine = sources.engine.stats();
  return {
    backend: sources.backendId,
    model: sources.manifest.name,
    at: sources.now,
    uptimeMs: Math.max(0, sources.now - sources.startedAt),
    executionProvider: sources.executor.provider,
    slots: Math.max(1, executor.slots),
    busyMs: executor.busyMs,
    requests: engine.requests,
    tokens: engine.rows,
    inFlightRequests: engine.inFlightRequests,
    inFlightRows: engine.inFlightRows,
    rejected: engine.rejected,
    memory: { rssBytes: sources.memory.rssBytes, heapUsedBytes: sources.memory.heapUsedBytes },
    parts,
    ...(sources.resources !== undefined ? { resources: sources.resources } : {}),
    ...(sources.host !== undefined ? { host: sources.host } : {}),
    ...(sources.residency !== undefined ? { residency: sources.residency } : {}),
    ...(sources.plan !== undefined ? { plan: sources.plan } : {}),
    ...(sources.peer !== undefined ? { peer: sources.peer } : {}),
  };
}

/** The peer section from the layer dispatcher's hop counters and both channel sides. */
export function peerReport(
  hops: {
    hops: number;
    hopRows: number;
    hopWallMs: number;
    hopExposedMs: number;
    hopPeerMs: number;
    hopCoveredMs: number;
  },
  sent: Iterable<{ cpuMs: number }>,
  served: { frames: number; rows: number; cpuMs: number },
): PeerReport {
  let sendCpuMs = 0;
  for (const channel of sent) sendCpuMs += channel.cpuMs;
  return {
    hops: hops.hops,
    rowsSent: hops.hopRows,
    hopMs: hops.hopWallMs,
    exposedMs: hops.hopExposedMs,
    coveredMs: hops.hopCoveredMs,
    peerServeMs: hops.hopPeerMs,
    sendCpuMs,
    framesServed: served.frames,
    rowsServed: served.rows,
    serveCpuMs: served.cpuMs,
  };
}

/** The host section from the loop probe and the batching queues' counters. */
export function hostReport(
  loop: { lagMs: number; elapsedMs: number },
  queues: readonly Pick<
    PartBatchStats,
    "groups" | "queueDelayMsSum" | "busyWaitMsSum" | "executions" | "executionMsSum"
  >[],
  windowMs: number,
): HostReport {
  let groups = 0, queueDelayMs = 0, busyWaitMs = 0, executions = 0, executionMs = 0;
  for (const queue of queues) {
    groups += queue.groups;
    queueDelayMs += queue.queueDelayMsSum;
    busyWaitMs += queue.busyWaitMsSum;
    executions += queue.executions;
    executionMs += queue.executionMsSum;
  }
  return {
    loopLagMs: loop.lagMs,
    loopElapsedMs: loop.elapsedMs,
    groups,
    queueDelayMs,
    busyWaitMs,
    executions,
    executionMs,
    windowMs: Math.max(0, windowMs),
  };
}
