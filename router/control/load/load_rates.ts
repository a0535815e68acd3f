/**
 * @module Rates from two load reports of one backend. Reports carry cumulative
 * counters, so the rate over an interval is Δcounter ÷ Δt; a lost report only widens
 * the interval. Utilisation is device time over available slot time,
 * `Δbusy ÷ (Δt · slots)`, clamped to [0, 1] (an execution's time is booked when it
 * ends, so one interval may see more than it had room for).
 *
 * Node resources, when both reports carry them: CPU cores used = Δcpu ms ÷ Δt ms (1.0 =
 * one core busy all the time; Workers count too) and network body bytes per second.
 */
import type { LoadReport, PartLoad, PeerReport } from "../../../shared/load_report.ts";

/** One backend's rates over the interval between two reports. */
export interface BackendRates {
  /** Length of the interval (ms, backend clock). */
  intervalMs: number;
  /** Share of slot time spent executing, in [0, 1]. */
  utilisation: number;
  tokensPerS: number;
  requestsPerS: number;
  rejectedPerS: number;
}

/** One part's rates over the interval. */
export interface PartRate {
  part: string;
  layer: number;
  kind: PartLoad["kind"];
  /** Logical expert id; -1 for gates. */
  expert: number;
  tokensPerS: number;
  executionsPerS: number;
  /** Device milliseconds per second spent on this part. */
  busyMsPerS: number;
}

/** Node-resource rates of a backend over the interval. */
export interface ResourceRates {
  /** CPU cores the process kept busy on average (Δcpu ms ÷ Δt ms). */
  cpuCores: number;
  /** Body bytes received per second (HTTP request bodies, peer frames). */
  netRxBytesPerS: number;
  /** Body bytes sent per second (HTTP response bodies, peer frames). */
  netTxBytesPerS: number;
}

/**
 * Host-side rates over the interval (reports with a `host` section): the main thread's
 * busy share and, per group leaving a batching queue, its wait against the execution
 * it then rode (the saturation signal's inputs, `router/control/load/saturation.ts`).
 */
export interface HostRates {
  /** Δ event-loop lateness ÷ Δ probe time, in [0, 1]. */
  hostBusy: number;
  /** Mean wait per group beyond the batching window (ms); 0 without groups. */
  queueWaitMs: number;
  /** Mean time per execution (ms); 0 without executions. */
  serviceMs: number;
  /** Groups that left a queue per second. */
  groupsPerS: number;
}

/** Rates of a backend and of each of its parts. */
export interface ReportRates {
  backend: BackendRates;
  parts: PartRate[];
  /** Absent when either report lacks `resources` (an older backend). */
  resources?: ResourceRates | undefined;
  /** Absent when either report lacks `host` (an older backend). */
  host?: HostRates | undefined;
  /**
   * Peer-hop counters over the interval (Δ of each cumulative field, not per second);
   * absent when either report lacks `peer`. The placement planner prices a remote row
   * from them (`remote_row_cost.ts`).
   */
  peer?: PeerReport | undefined;
}

/**
 * Whether `current` continues the run `previous` belongs to: same backend and model,
 * time moved on and no counter went back (else the backend restarted in between).
 */
export function sameRun(previous: LoadReport, current: LoadReport): boolean {
  return previous.backend === current.backend && previous.model === current.model &&
    current.at > previous.at && current.uptimeMs > previous.uptimeMs &&
    current.busyMs >= previous.busyMs && current.tokens >= previous.tokens &&
    current.requests >= previous.requests;
}

/** Rates between two reports of one run; `undefined` when they are not of one run. */
export function reportRates(previous: LoadReport, current: LoadReport): ReportRates | undefined {
  if (!sameRun(previous, current)) return undefined;
  const intervalMs = current.at - previous.at;
  const perS = (now: number, before: number) => Math.max(0, now - before) * 1000 / intervalMs;
  const before = new Map(previous.parts.map((part) => [part.part, part]));
  const parts = current.parts.map((part): PartRate => {
    const old = before.get(part.part);
    return {
      part: part.part,
      layer: part.layer,
      kind: part.kind,
      expert: part.expert,
      tokensPerS: perS(part.tokens, old?.tokens ?? 0),
      executionsPerS: perS(part.executions, old?.executions ?? 0),
      busyMsPerS: perS(part.busyMs, old?.busyMs ?? 0),
    };
  });
  const busy = current.busyMs - previous.busyMs;
  const now = current.resources;
  const then = previous.resources;
  const resources = now && then
    ? {
      cpuCores: Math.max(0, now.cpuMs - then.cpuMs) / intervalMs,
      netRxBytesPerS: perS(now.netRxBytes, then.netRxBytes),
      netTxBytesPerS: perS(now.netTxBytes, then.netTxBytes),
    }
    : undefined;
  const host = hostRates(previous, current, intervalMs);
  const peer = peerDelta(previous.peer, current.peer);
  return {
    backend: {
      intervalMs,
      utilisation: Math.min(1, Math.max(0, busy / (intervalMs * current.slots))),
      tokensPerS: perS(current.tokens, previous.tokens),
      requestsPerS: perS(current.requests, previous.requests),
      rejectedPerS: perS(current.rejected, previous.rejected),
    },
    parts,
    ...(resources ? { resources } : {}),
    ...(host ? { host } : {}),
    ...(peer ? { peer } : {}),
  };
}

/** Δ of every peer counter between two reports of one run; `undefined` when either lacks it. */
export function peerDelta(
  previous: PeerReport | undefined,
  current: PeerReport | undefined,
): PeerReport | undefined {
  if (previous === undefined || current === undefined) return undefined;
  const delta = {} as PeerReport;
  for (const key of Object.keys(current) as (keyof PeerReport)[]) {
    delta[key] = Math.max(0, current[key] - (previous[key] ?? 0));
  }
  return delta;
}

/** Host-side rates between two reports; `undefined` when either lacks `host`. */
export function hostRates(
  previous: LoadReport,
  current: LoadReport,
  intervalMs: number,
): HostRates | undefined {
  const now = current.host;
  const then = previous.host;
  if (now === undefined || then === undefined) return undefined;
  const delta = (a: number, b: number) => Math.max(0, a - b);
  const elapsed = delta(now.loopElapsedMs, then.loopElapsedMs);
  const groups = delta(now.groups, then.groups);
  const executions = delta(now.executions, then.executions);
  const waitPerGroup = groups > 0 ? delta(now.queueDelayMs, then.queueDelayMs) / groups : 0;
  // Queueing proper: waits while every execution place was taken, as the backend counts
  // them; an older backend's total wait less the batching window (deliberate waiting).
  const queueWaitMs = now.busyWaitMs !== undefined && then.busyWaitMs !== undefined
    ? (groups > 0 ? delta(now.busyWaitMs, then.busyWaitMs) / groups : 0)
    : Math.max(0, waitPerGroup - now.windowMs);
  return {
    hostBusy: elapsed > 0 ? Math.min(1, delta(now.loopLagMs, then.loopLagMs) / elapsed) : 0,
    queueWaitMs,
    serviceMs: executions > 0 ? delta(now.executionMs, then.executionMs) / executions : 0,
    groupsPerS: groups * 1000 / intervalMs,
  };
}
