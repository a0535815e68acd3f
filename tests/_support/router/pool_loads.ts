/**
 * @module Test helper: crafted pool loads of model "tiny" — one-second samples whose
 * routed experts ran given token counts (0.1 ms per token, as `fakeLoadReport` books).
 */
import { reportRates } from "../../../router/control/load/load_rates.ts";
import {
  aggregatePoolLoad,
  type BackendLoad,
  type BackendLoadSample,
  type PoolLoad,
} from "../../../router/control/load/pool_load.ts";
import { fakeLoadReport } from "./load_reports.ts";

/** Router time of the samples' second report. */
export const SAMPLE_AT = 1_700_000_001_000;

/** What a one-second sample adds beyond expert tokens (all optional). */
export interface SampleOptions {
  stale?: boolean;
  slots?: number;
  /** Executor busy ms over the second; default the experts' (0.1 ms per token). */
  busyMs?: number;
  /** Requests admitted and refused over the second; default 0. */
  requests?: number;
  /** Tokens (rows) the backend served over the second; default 0. */
  tokens?: number;
  rejected?: number;
  /** Host side over the second: loop lateness (ms of 1000), queue wait and execution ms. */
  host?: { loopLagMs: number; queueWaitMs?: number; serviceMs?: number };
}

/**
 * A sample of backend `id` (`host:N`, named `backend-N`) whose routed experts ran
 * `expertTokens[layer][expert]` tokens over one second; `stale` marks a failed poll.
 */
export function oneSecondSample(
  id: string,
  expertTokens: number[][],
  options: SampleOptions = {},
): BackendLoadSample {
  const name = `backend-${id.slice(-1)}`;
  const zeros = expertTokens.map((layer) => layer.map(() => 0));
  const slots = options.slots ?? 2;
  const at = SAMPLE_AT - 1000;
  const busyMs = options.busyMs ?? expertTokens.flat().reduce((a, b) => a + b, 0) * 0.1;
  const host = options.host;
  const hostBefore = host && {
    loopLagMs: 0,
    loopElapsedMs: 0,
    groups: 0,
    queueDelayMs: 0,
    executions: 0,
    executionMs: 0,
    windowMs: 0,
  };
  const hostAfter = host && {
    loopLagMs: host.loopLagMs,
    loopElapsedMs: 1000,
    groups: 100,
    queueDelayMs: 100 * (host.queueWaitMs ?? 0),
    executions: 100,
    executionMs: 100 * (host.serviceMs ?? 1),
    windowMs: 0,
  };
  const before = fakeLoadReport({
    backend: name,
    at,
    slots,
    expertTokens: zeros,
    ...(hostBefore ? { host: hostBefore } : {}),
  });
  const after = fakeLoadReport({
    backend: name,
    at: at + 1000,
    slots,
    expertTokens,
    busyMs,
    requests: options.requests ?? 0,
    tokens: options.tokens ?? 0,
    rejected: options.rejected ?? 0,
    ...(hostAfter ? { host: hostAfter } : {}),
  });
  return {
    id,
    name,
    report: after,
    rates: reportRates(before, after),
    receivedAt: SAMPLE_AT,
    error: options.stale ? "connection failed: refused" : undefined,
  };
}

/** The pool's load over `samples` at {@linkcode SAMPLE_AT}. */
export function poolLoadOf(...samples: BackendLoadSample[]): PoolLoad {
  return aggregatePoolLoad(samples, { now: SAMPLE_AT, staleAfterMs: 3000 });
}

/** A fresh backend's load with every field set; `fields` override (tests only). */
export function backendLoadOf(fields: Partial<BackendLoad> & { id: string }): BackendLoad {
  return {
    name: fields.id,
    model: "m",
    stale: false,
    error: undefined,
    reportAgeMs: 0,
    utilisation: 0,
    tokensPerS: 0,
    requestsPerS: 0,
    inFlight: 0,
    inFlightRows: 0,
    queueDepth: 0,
    slots: 1,
    executionProvider: "cpu",
    memory: undefined,
    cpuCores: undefined,
    netRxBytesPerS: undefined,
    netTxBytesPerS: undefined,
    accelerator: null,
    powerW: null,
    plan: undefined,
    expertLayers: undefined,
    ...fields,
  };
}
