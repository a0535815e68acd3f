/**
 * @module Efficiency over time from the per-backend buckets: tokens/s per backend and
 * for the pool, utilisation, and tokens per joule where accelerator power was read.
 *
 * Rates divide by the time a backend was measured (`coveredMs`), so a partly elapsed or
 * partly reported bucket is not diluted. The pool's tokens/s is the sum of the
 * backends' rates; its utilisation is busy time ÷ measured time over all backends; its
 * tokens per joule uses only the backends (and rounds) with power readings. Where no
 * power was read, tokens per joule is `null` — never estimated.
 */
import type { BackendBucket } from "./backend_bucket.ts";

/** Efficiency of one backend (or the pool) per bucket and over the range. */
export interface EfficiencySeries {
  /** `[bucket]` → tokens/s while measured; `null` when not measured in that bucket. */
  tokensPerS: (number | null)[];
  /** `[bucket]` → utilisation in [0, 1]; `null` when not measured. */
  utilisation: (number | null)[];
  /** `[bucket]` → mean accelerator power (W); `null` when not read. */
  powerW: (number | null)[];
  /** `[bucket]` → tokens per joule; `null` when power was not read. */
  tokensPerJoule: (number | null)[];
  totals: {
    tokens: number;
    /** Tokens ÷ measured seconds over the range; `null` when never measured. */
    tokensPerS: number | null;
    utilisation: number | null;
    /** Joules over the rounds with power readings; `null` when none. */
    energyJ: number | null;
    tokensPerJoule: number | null;
  };
}

/** Efficiency of every backend and of the pool. */
export interface Efficiency {
  backends: { backend: string; series: EfficiencySeries }[];
  pool: EfficiencySeries;
  /** Backends with at least one power reading in the range. */
  powerReadOn: string[];
}

function ratio(numerator: number, denominator: number): number | null {
  return denominator > 0 ? numerator / denominator : null;
}

function totalsOf(buckets: readonly BackendBucket[]): EfficiencySeries["totals"] {
  const sum = (pick: (b: BackendBucket) => number) => buckets.reduce((s, b) => s + pick(b), 0);
  const poweredMs = sum((b) => b.poweredMs);
  return {
    tokens: sum((b) => b.tokens),
    tokensPerS: ratio(sum((b) => b.tokens), sum((b) => b.coveredMs) / 1000),
    utilisation: ratio(sum((b) => b.busyMs), sum((b) => b.coveredMs)),
    energyJ: poweredMs > 0 ? sum((b) => b.energyJ) : null,
    tokensPerJoule: poweredMs > 0
      ? ratio(sum((b) => b.poweredTokens), sum((b) => b.energyJ))
      : null,
  };
}

/** One backend's series; `buckets[i]` undefined where nothing was recorded. */
export function backendEfficiency(
  buckets: readonly (BackendBucket | undefined)[],
): EfficiencySeries {
  const present = buckets.filter((b): b is BackendBucket => b !== undefined);
  return {
    tokensPerS: buckets.map((b) => b ? ratio(b.tokens, b.coveredMs / 1000) : null),
    utilisation: buckets.map((b) => b ? ratio(b.busyMs, b.coveredMs) : null),
    powerW: buckets.map((b) => b && b.poweredMs > 0 ? b.energyJ / (b.poweredMs / 1000) : null),
    tokensPerJoule: buckets.map((b) =>
      b && b.poweredMs > 0 ? ratio(b.poweredTokens, b.energyJ) : null
    ),
    totals: totalsOf(present),
  };
}

/**
 * Efficiency of `backends` (id → `[bucket]` → bucket or undefined) over `count`
 * buckets; pure.
 */
export function efficiency(
  backends: ReadonlyMap<string, readonly (BackendBucket | undefined)[]>,
  count: number,
): Efficiency {
  const ids = [...backends.keys()].sort();
  const perBackend = ids.map((backend) => ({
    backend,
    series: backendEfficiency(Array.from({ length: count }, (_, i) => backends.get(backend)![i])),
  }));
  const column = (i: number) =>
    ids.flatMap((id) => backends.get(id)![i] ?? []).filter((b) => b.coveredMs > 0);
  const pool: EfficiencySeries = {
    tokensPerS: Array.from({ length: count }, (_, i) => {
      const rates = column(i).map((b) => b.tokens / (b.coveredMs / 1000));
      return rates.length === 0 ? null : rates.reduce((s, r) => s + r, 0);
    }),
    utilisation: Array.from({ length: count }, (_, i) => {
      const col = column(i);
      return ratio(col.reduce((s, b) => s + b.busyMs, 0), col.reduce((s, b) => s + b.coveredMs, 0));
    }),
    powerW: Array.from({ length: count }, (_, i) => {
      const powered = column(i).filter((b) => b.poweredMs > 0);
      if (powered.length === 0) return null;
      return powered.reduce((s, b) => s + b.energyJ / (b.poweredMs / 1000), 0);
    }),
    tokensPerJoule: Array.from({ length: count }, (_, i) => {
      const powered = column(i).filter((b) => b.poweredMs > 0);
      if (powered.length === 0) return null;
      return ratio(
        powered.reduce((s, b) => s + b.poweredTokens, 0),
        powered.reduce((s, b) => s + b.energyJ, 0),
      );
    }),
    totals: {
      ...totalsOf(ids.flatMap((id) => backends.get(id)!.filter((b) => b !== undefined))),
      // The pool's rate is the sum of the backends' mean rates, not tokens ÷ their summed time.
      tokensPerS: sumOrNull(perBackend.map((b) => b.series.totals.tokensPerS)),
    },
  };
  return {
    backends: perBackend,
    pool,
    powerReadOn: perBackend.filter((b) => b.series.totals.energyJ !== null).map((b) => b.backend),
  };
}

function sumOrNull(values: readonly (number | null)[]): number | null {
  const present = values.filter((v): v is number => v !== null);
  return present.length === 0 ? null : present.reduce((s, v) => s + v, 0);
}
