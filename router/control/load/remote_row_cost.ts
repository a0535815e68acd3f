/**
 * @module What a row costs, pure: the **remote-row cost** (one row crossing to a peer) from
 * the backends' peer counters, and the **expert-row cost** (one routed-expert row executed)
 * from their device time, each over counters summed across backends and rounds. The
 * placement planner (`control/balancer/placement_cost.ts`) weighs hops against imbalance
 * with them.
 *
 * Estimator "exposed transport + host CPU per remote row" ({@linkcode remoteRowCost}):
 * `(max(0, Σ exposedMs − Σ peerServeMs) + Σ sendCpuMs + Σ serveCpuMs) ÷ Σ rowsSent` —
 * - exposed transport: hop time requests waited on with none of their own work running
 *   (what overlap could not hide: latency the request pays, capacity a closed loop loses)
 *   beyond the peers' own serving time — that is the rows' queueing and execution on the
 *   peer, which they would spend on the entry backend too and the planner prices as
 *   execution; counting it here would price every hop as a second execution. Taken over
 *   sums, not per hop: a hop partly hidden under local work lends its slack to others, so
 *   this errs low when overlap is partial;
 * - `sendCpuMs`: the entry side's host-thread ms packing frames and reading answers;
 * - `serveCpuMs`: the peer side's host-thread ms decoding and answering.
 * The covered part of a hop (hidden under computation) costs nothing but that CPU. A row is
 * a token sent to one peer once, with all its assignments to that peer's experts.
 *
 * Estimator "device ms per expert row" ({@linkcode expertRowCost}): Σ device-busy ms ÷ Σ
 * routed-expert rows run — gates, shared experts and each execution's fixed part included,
 * so it is the cost of a row at the batch sizes the pool runs now.
 *
 * Below {@linkcode MIN_REMOTE_ROWS} / {@linkcode MIN_EXPERT_ROWS} rows the sample says too
 * little and the estimators answer null; the caller then keeps an earlier measurement or
 * uses a stated default ("assumed").
 */
import type { PeerReport } from "../../../shared/load_report.ts";

/** Fewer remote rows than this in a window do not make a measurement. */
export const MIN_REMOTE_ROWS = 64;
/** Fewer expert rows than this in a window do not make a measurement. */
export const MIN_EXPERT_ROWS = 256;

/** Peer counters that are all zero (the sum of nothing). */
export const NO_PEER: Readonly<PeerReport> = {
  hops: 0,
  rowsSent: 0,
  hopMs: 0,
  exposedMs: 0,
  coveredMs: 0,
  peerServeMs: 0,
  sendCpuMs: 0,
  framesServed: 0,
  rowsServed: 0,
  serveCpuMs: 0,
};

/** Field-wise sum of peer counters (e.g. the Δ of several backends and rounds). */
export function addPeer(a: Readonly<PeerReport>, b: Readonly<PeerReport>): PeerReport {
  const sum = { ...a };
  for (const key of Object.keys(NO_PEER) as (keyof PeerReport)[]) sum[key] = a[key] + b[key];
  return sum;
}

/** The measured cost of a remote row and its parts (ms per row). */
export interface RemoteRowCost {
  /** `exposed + sendCpu + serveCpu`: what the planner charges per remote row. */
  ms: number;
  /** Exposed hop time beyond the peers' serving, per row. */
  exposedMs: number;
  sendCpuMs: number;
  serveCpuMs: number;
  /** Rows the estimate rests on. */
  rows: number;
}

/** "Exposed transport + host CPU per remote row" over `totals`; null below `minRows` rows. */
export function remoteRowCost(
  totals: Readonly<PeerReport>,
  minRows: number = MIN_REMOTE_ROWS,
): RemoteRowCost | null {
  const rows = totals.rowsSent;
  if (!(rows >= minRows) || rows <= 0) return null;
  const exposedMs = Math.max(0, totals.exposedMs - totals.peerServeMs) / rows;
  const sendCpuMs = totals.sendCpuMs / rows;
  const serveCpuMs = totals.serveCpuMs / rows;
  return { ms: exposedMs + sendCpuMs + serveCpuMs, exposedMs, sendCpuMs, serveCpuMs, rows };
}

/** Device ms per routed-expert row over `busyMs` and `rows`; null below `minRows` rows. */
export function expertRowCost(
  busyMs: number,
  rows: number,
  minRows: number = MIN_EXPERT_ROWS,
): { ms: number; rows: number } | null {
  if (!(rows >= minRows) || rows <= 0 || !(busyMs >= 0)) return null;
  return { ms: busyMs / rows, rows };
}
