/**
 * @module Micro-batch bounds advice from what backends measure: per part (gate, each
 * expert) the group arrival rate λ, mean rows per group r̄ and the fitted service curve
 * `s(n) = a + b·n` ms for n rows, on `S` executor slots. Pure.
 *
 * With every queue batching `B` groups, executor utilisation is
 * `ρ(B) = Σ λ·(a/B + b·r̄) / (1000·S)`; the smallest batch that keeps `ρ ≤ 0.7` at twice
 * the observed rate (peak headroom) is `B* = ⌈2·Σλa / (0.7·1000·S − 2·Σλbr̄)⌉`.
 * - `max` must allow `B*` (rounded up to a power of two); a larger `max` is harmless (a
 *   bound, not a target), so it is never advised down.
 * - `max_wait_ms` must let a busy queue gather `B*` groups: `(B* − 1)/λ` at the median
 *   busy part's rate, capped at a quarter of the latency budget.
 * - `min` above 1 makes a lone request wait `max_wait` at low load; advise 1 when no
 *   batching is needed and the busiest part sees fewer than one arrival per `max_wait`.
 * When no batch size suffices (the denominator ≤ 0) the pool lacks capacity: the advice
 * says so instead of inventing bounds.
 */
import type { Advice } from "./advice_types.ts";

/** One part's measurements on one backend (from `/v2/health/ready` details). */
export interface PartMeasure {
  part: string;
  /** Groups per second arriving. */
  arrivalPerS: number;
  groups: number;
  rows: number;
  executions: number;
  queueDelayMsSum: number;
  queueDelayMsMax: number;
  service: { fixedMs: number; perRowMs: number };
}

/** One backend's batching measurements. */
export interface BackendBatching {
  backend: string;
  slots: number;
  parts: PartMeasure[];
}

/** Current bounds (`batching` config). */
export interface BatchingBounds {
  min: number;
  max: number;
  max_wait_ms: number;
  latency_budget_ms: number;
}

const TARGET_UTILISATION = 0.7;
const PEAK_FACTOR = 2;

function nextPowerOfTwo(n: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, n)));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

interface BackendNeed {
  backend: string;
  /** Smallest batch (groups) keeping ρ ≤ 0.7 at peak; Infinity when none does. */
  batch: number;
  /** Median arrival rate of the busy parts (groups/s). */
  busyRate: number;
  peakRate: number;
  meanFormed: number;
  meanDelayMs: number;
}

function need(backend: BackendBatching): BackendNeed | undefined {
  const busy = backend.parts.filter((p) => p.arrivalPerS > 0 && p.groups > 0);
  if (busy.length === 0) return undefined;
  let fixed = 0;
  let perRow = 0;
  for (const part of busy) {
    const meanRows = part.rows / part.groups;
    fixed += PEAK_FACTOR * part.arrivalPerS * part.service.fixedMs;
    perRow += PEAK_FACTOR * part.arrivalPerS * part.service.perRowMs * meanRows;
  }
  const room = TARGET_UTILISATION * 1000 * backend.slots - perRow;
  const executions = busy.reduce((sum, p) => sum + p.executions, 0);
  const groups = busy.reduce((sum, p) => sum + p.groups, 0);
  return {
    backend: backend.backend,
    batch: room <= 0 ? Infinity : Math.max(1, Math.ceil(fixed / room)),
    busyRate: median(busy.map((p) => p.arrivalPerS)),
    peakRate: Math.max(...busy.map((p) => p.arrivalPerS)),
    meanFormed: executions === 0 ? 1 : groups / executions,
    meanDelayMs: groups === 0 ? 0 : busy.reduce((s, p) => s + p.queueDelayMsSum, 0) / groups,
  };
}

/** One backend's measured rates and the batch size it needs, as one line of evidence. */
function needEvidence(n: BackendNeed): string {
  return `${n.backend}: busy parts see ${n.busyRate.toFixed(1)} groups/s (peak part ${
    n.peakRate.toFixed(1)
  }), mean formed batch ${n.meanFormed.toFixed(2)}, mean queue delay ${
    n.meanDelayMs.toFixed(2)
  } ms; ${
    Number.isFinite(n.batch)
      ? `needs batches of ${n.batch} to stay ≤ 70 % busy at 2× this rate`
      : "no batch size keeps it ≤ 70 % busy at 2× this rate"
  }`;
}

/** Advice on `batching.min/max/max_wait_ms` for the measured backends. */
export function batchingAdvice(
  backends: readonly BackendBatching[],
  bounds: BatchingBounds,
): Advice {
  const title = "Micro-batch bounds (batching.min / max / max_wait_ms)";
  const needs = backends.flatMap((b) => need(b) ?? []);
  if (needs.length === 0) {
    return {
      id: "batching",
      title,
      recommended: false,
      evidence: ["no traffic measured yet on any backend"],
      expectedEffect: "none",
      risk: "none",
      apply: "none",
      details: {},
    };
  }
  const evidence = needs.map(needEvidence);
  const short = needs.filter((n) => !Number.isFinite(n.batch));
  if (short.length > 0) {
    return {
      id: "batching",
      title,
      recommended: false,
      evidence,
      expectedEffect: `batching cannot absorb 2× the current rate on ${
        short.map((n) => n.backend).join(", ")
      }: per-row work alone exceeds the executors; add backends or replicas instead`,
      risk: "none (no bounds change advised)",
      apply: "none",
      details: { needs },
    };
  }
  const batch = Math.max(...needs.map((n) => n.batch));
  const max = Math.min(256, Math.max(bounds.max, nextPowerOfTwo(batch)));
  const busiest = needs.reduce((a, b) => (b.batch > a.batch ? b : a));
  const fillMs = batch <= 1 ? 0 : ((batch - 1) / busiest.busyRate) * 1000;
  const maxWait = Math.min(bounds.latency_budget_ms / 4, Math.max(bounds.max_wait_ms, fillMs));
  // Only when no batching is needed: a lone request then gains nothing by waiting.
  const lowRate = batch <= 1 &&
    Math.max(...needs.map((n) => n.peakRate)) * (bounds.max_wait_ms / 1000) < 1;
  const min = lowRate ? 1 : bounds.min;
  const proposed = { min, max, max_wait_ms: Math.round(maxWait * 100) / 100 };
  const changed = proposed.min !== bounds.min || proposed.max !== bounds.max ||
    proposed.max_wait_ms !== bounds.max_wait_ms;
  return {
    id: "batching",
    title,
    recommended: changed,
    evidence,
    expectedEffect: changed
      ? `bounds ${bounds.min}/${bounds.max}/${bounds.max_wait_ms} ms → ${proposed.min}/${proposed.max}/${proposed.max_wait_ms} ms: ` +
        (proposed.max > bounds.max
          ? `batches up to ${proposed.max} keep executors below 70 % at 2× load; `
          : "") +
        (proposed.max_wait_ms > bounds.max_wait_ms
          ? `a busy queue gets ${proposed.max_wait_ms} ms to fill them; `
          : "") +
        (proposed.min < bounds.min ? "lone requests at low load no longer wait for a partner" : "")
      : `current bounds ${bounds.min}/${bounds.max}/${bounds.max_wait_ms} ms fit the measured load`,
    risk: changed
      ? `up to ${proposed.max_wait_ms} ms extra queueing per layer at low load; needs a backend restart`
      : "none",
    apply: changed ? "config" : "none",
    ...(changed
      ? {
        settings: {
          "batching.min": proposed.min,
          "batching.max": proposed.max,
          "batching.max_wait_ms": proposed.max_wait_ms,
        },
      }
      : {}),
    details: { needs, current: bounds, proposed },
  };
}
