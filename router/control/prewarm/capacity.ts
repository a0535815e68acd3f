/**
 * @module Per-backend capacity for the pre-warm job, pure: the load signal's estimate
 * (`router/control/load/saturation.ts` — tokens/s measured at saturation, else tokens/s ÷
 * saturation, capped by an earlier measurement), median over fresh backends.
 *
 * A backend without the signal (an older report, or a test's bare sample) is estimated
 * the same way with its executor utilisation as saturation.
 */
import type { BackendLoad } from "../load/pool_load.ts";
import { backendCapacity } from "../load/saturation.ts";

/** The part of the pool's load capacity is estimated from (`PoolLoad` fits). */
export interface CapacitySignals {
  backends: readonly (
    & Pick<BackendLoad, "id" | "stale" | "utilisation" | "tokensPerS">
    & Partial<Pick<BackendLoad, "capacity" | "saturation">>
  )[];
}

/** Tokens/s one backend sustains, or null when no report allows it. */
export function estimateCapacity(load: CapacitySignals | null): number | null {
  if (load === null) return null;
  const estimates = load.backends.flatMap((backend) => {
    if (backend.stale) return [];
    const estimate = backend.capacity ?? backendCapacity({
      id: backend.id,
      saturation: backend.saturation?.value ?? backend.utilisation,
      tokensPerS: backend.tokensPerS,
    }, new Map());
    return estimate ? [estimate.tokensPerS] : [];
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
