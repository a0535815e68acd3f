/**
 * @module Expert skew over time (across a layer's experts; balancedness is across
 * backends, `control/load/backend_balance.ts`): per bucket and layer the share of load on the
 * hottest 10 % of experts and the coefficient of variation, and their mean over the
 * loaded layers.
 *
 * A bucket (or layer) without load has no balance to speak of: its statistics are
 * `null` rather than the degenerate "perfectly balanced" values of an all-zero vector.
 */
import { coefficientOfVariation } from "../../../shared/balancedness.ts";
import { topShare } from "../../control/load/load_stats.ts";

/** Expert skew of one expert-load vector. */
export interface BalanceStats {
  cv: number;
  /** Share of the load on the top 10 % of experts (at least one expert). */
  top10Share: number;
}

/** One layer in one bucket. */
export interface LayerBalance {
  layer: number;
  /** Expert tokens in this layer and bucket. */
  tokens: number;
  stats: BalanceStats | null;
}

/** One bucket. */
export interface BucketBalance {
  at: number;
  tokens: number;
  layers: LayerBalance[];
  /** Mean of each statistic over the loaded layers; `null` when none was loaded. */
  mean: BalanceStats | null;
}

/** Balance statistics of one load vector; `null` when nothing is loaded. */
export function balanceStats(loads: readonly number[]): BalanceStats | null {
  if (!loads.some((load) => load > 0)) return null;
  return {
    cv: coefficientOfVariation(loads),
    top10Share: topShare(loads, 0.1),
  };
}

/** Mean of each statistic over `stats` (nulls skipped); `null` when none. */
export function meanStats(stats: readonly (BalanceStats | null)[]): BalanceStats | null {
  const present = stats.filter((s): s is BalanceStats => s !== null);
  if (present.length === 0) return null;
  const mean = (pick: (s: BalanceStats) => number) =>
    present.reduce((sum, s) => sum + pick(s), 0) / present.length;
  return {
    cv: mean((s) => s.cv),
    top10Share: mean((s) => s.top10Share),
  };
}

/**
 * Balance per bucket. `loads[layer][bucket]` is that layer's expert-token vector in the
 * bucket starting at `buckets[bucket]`; pure.
 */
export function balanceOverTime(
  buckets: readonly number[],
  loads: readonly (readonly (readonly number[])[])[],
): BucketBalance[] {
  return buckets.map((at, b) => {
    const layers = loads.map((series, layer): LayerBalance => {
      const vector = series[b] ?? [];
      return {
        layer,
        tokens: vector.reduce((sum, v) => sum + v, 0),
        stats: balanceStats(vector),
      };
    });
    return {
      at,
      tokens: layers.reduce((sum, l) => sum + l.tokens, 0),
      layers,
      mean: meanStats(layers.map((l) => l.stats)),
    };
  });
}
