/**
 * @module What one bucket of one backend's efficiency series holds, how a collector
 * round adds to it, and how two partial buckets add up.
 *
 * A round contributes its rates × the round interval: tokens, busy time (utilisation ×
 * interval, so already per slot) and, only when the backend read its accelerator power,
 * energy (power × interval — the rectangle rule over the rounds) together with the
 * tokens and time that energy covers. Tokens per joule is therefore always computed
 * from tokens and energy of the same rounds; nothing is estimated where power was not
 * read.
 */
import type { BackendLoad } from "../../control/load/pool_load.ts";

/** One backend's efficiency in one bucket. */
export interface BackendBucket {
  /** Tokens the backend served (its own count: every router's traffic). */
  tokens: number;
  /** Milliseconds of rounds with rates (the denominator of rates and utilisation). */
  coveredMs: number;
  /** Utilisation × round ms, summed (busy time per slot). */
  busyMs: number;
  /** Joules: power × round seconds over the rounds where power was read. */
  energyJ: number;
  /** Milliseconds covered by power readings. */
  poweredMs: number;
  /** Tokens served during the rounds where power was read. */
  poweredTokens: number;
}

/** An empty bucket. */
export function emptyBackendBucket(): BackendBucket {
  return { tokens: 0, coveredMs: 0, busyMs: 0, energyJ: 0, poweredMs: 0, poweredTokens: 0 };
}

/** The sum of two buckets (new object); `a` may be missing. */
export function addBackendBuckets(a: BackendBucket | null, b: BackendBucket): BackendBucket {
  const base = a ?? emptyBackendBucket();
  return {
    tokens: base.tokens + b.tokens,
    coveredMs: base.coveredMs + b.coveredMs,
    busyMs: base.busyMs + b.busyMs,
    energyJ: base.energyJ + b.energyJ,
    poweredMs: base.poweredMs + b.poweredMs,
    poweredTokens: base.poweredTokens + b.poweredTokens,
  };
}

/**
 * What one collector round of `backend` adds, covering `roundMs`; `null` when the
 * backend is stale or has no rates yet (nothing was measured).
 */
export function roundContribution(backend: BackendLoad, roundMs: number): BackendBucket | null {
  if (backend.stale || backend.tokensPerS === undefined || backend.utilisation === undefined) {
    return null;
  }
  const seconds = roundMs / 1000;
  const tokens = backend.tokensPerS * seconds;
  const power = typeof backend.powerW === "number" && Number.isFinite(backend.powerW) &&
      backend.powerW >= 0
    ? backend.powerW
    : null;
  return {
    tokens,
    coveredMs: roundMs,
    busyMs: backend.utilisation * roundMs,
    energyJ: power === null ? 0 : power * seconds,
    poweredMs: power === null ? 0 : roundMs,
    poweredTokens: power === null ? 0 : tokens,
  };
}
