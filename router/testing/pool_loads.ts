/**
 * @module Test helper: crafted pool loads of model "tiny" — one-second samples whose
 * routed experts ran given token counts (0.1 ms per token, as `fakeLoadReport` books).
 */
import { reportRates } from "../load/load_rates.ts";
import {
  aggregatePoolLoad,
  type BackendLoad,
  type BackendLoadSample,
  type PoolLoad,
} from "../load/pool_load.ts";
import { fakeLoadReport } from "./load_reports.ts";

/** Router time of the samples' second report. */
export const SAMPLE_AT = 1_700_000_001_000;

/**
 * A sample of backend `id` (`host:N`, named `backend-N`) whose routed experts ran
 * `expertTokens[layer][expert]` tokens over one second; `stale` marks a failed poll.
 */
export function oneSecondSample(
  id: string,
  expertTokens: number[][],
  options: { stale?: boolean; slots?: number } = {},
): BackendLoadSample {
  const name = `backend-${id.slice(-1)}`;
  const zeros = expertTokens.map((layer) => layer.map(() => 0));
  const slots = options.slots ?? 2;
  const at = SAMPLE_AT - 1000;
  const before = fakeLoadReport({ backend: name, at, slots, expertTokens: zeros });
  const after = fakeLoadReport({ backend: name, at: at + 1000, slots, expertTokens });
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
