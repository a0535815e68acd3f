/**
 * @module Per-backend capacity from load reports, pure: tokens/s ÷ utilisation of each
 * fresh backend, the median over backends.
 *
 * Guards: a backend counts only when its report is fresh, its utilisation is at least
 * `minUtilisation` (near-idle ratios are dominated by fixed costs and noise) and its
 * tokens/s is positive; utilisation above 1 counts as 1.
 */
import type { BackendLoad } from "../load/pool_load.ts";

/** The part of the pool's load capacity is estimated from (`PoolLoad` fits). */
export interface CapacitySignals {
  backends: readonly Pick<BackendLoad, "id" | "stale" | "utilisation" | "tokensPerS">[];
}

/** Options of {@linkcode estimateCapacity}. */
export interface CapacityOptions {
  /** Smallest utilisation that yields an estimate; default 0.05. */
  minUtilisation?: number;
}

/** Tokens/s one backend sustains at full utilisation, or null when no report allows it. */
export function estimateCapacity(
  load: CapacitySignals | null,
  options: CapacityOptions = {},
): number | null {
  if (load === null) return null;
  const minUtilisation = options.minUtilisation ?? 0.05;
  const estimates = load.backends.flatMap((backend) => {
    const { utilisation, tokensPerS } = backend;
    if (backend.stale || utilisation === undefined || tokensPerS === undefined) return [];
    if (!(utilisation >= minUtilisation) || !(tokensPerS > 0)) return [];
    return [tokensPerS / Math.min(utilisation, 1)];
  });
  return median(estimates);
}

/** Router tokens/s the pool serves now (fresh backends' sum), or null when unknown. */
export function observedTokensPerS(load: CapacitySignals | null): number | null {
  if (load === null) return null;
  const fresh = load.backends.filter((b) => !b.stale && b.tokensPerS !== undefined);
  return fresh.length === 0 ? null : fresh.reduce((sum, b) => sum + b.tokensPerS!, 0);
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
