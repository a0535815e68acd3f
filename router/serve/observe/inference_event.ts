/**
 * @module One finished inference request as the router saw it, handed to every
 * {@linkcode InferenceObserver} (request log line, request metrics, traffic series).
 * Observers run synchronously after the response is ready: they must be cheap and must
 * never throw (the app catches and ignores what they throw).
 */

import type { RouterPhases } from "./router_phases.ts";

/** Per MoE layer: logical expert id → routed selections (rows × top-k) of this request. */
export type ExpertCounts = ReadonlyArray<ReadonlyMap<number, number>>;

/** A finished inference request, successful or not. */
export interface InferenceEvent {
  requestId: string;
  /** Model name from the path. */
  model: string;
  requestType: string | undefined;
  /** Token rows; `undefined` when the body was rejected before decoding. */
  rows: number | undefined;
  /** Entry backend that answered (its own id); `undefined` when none did. */
  backend: string | undefined;
  /** Experts selected per layer, from the backend's `x-switchyard-experts` header. */
  experts: ExpertCounts | undefined;
  /** Per layer: the largest micro-batch (groups) this request's expert rows joined. */
  batches: readonly number[] | undefined;
  /** HTTP status answered to the client. */
  status: number;
  /** Router-side latency, ms. */
  ms: number;
  /** Router clock ms when the answer was ready. */
  at: number;
  /** Error message for 4xx/5xx answers. */
  error?: string;
  /** Where the time went (router, network, backend, total; ms), when a backend answered. */
  phases?: RouterPhases;
}

/** Receives every finished inference request. */
export type InferenceObserver = (event: InferenceEvent) => void;
