/**
 * @module Expert activation over time for one layer: per expert its tokens in each
 * bucket, the layer's total per bucket, and the top-N hot experts over the whole range
 * (by total tokens, ties to the lower expert id) with each one's series.
 */

/** One hot expert over the range. */
export interface HotExpert {
  expert: number;
  /** Tokens routed to it over the range. */
  total: number;
  /** Its share of the layer's tokens over the range (0 when the layer was idle). */
  share: number;
  /** `[bucket]` → tokens. */
  series: number[];
}

/** Activation of one layer over a range of buckets. */
export interface LayerActivation {
  layer: number;
  experts: number;
  /** `[bucket]` → tokens over all experts. */
  totals: number[];
  /** `[expert]` → tokens over the range. */
  expertTotals: number[];
  /** `[expert][bucket]` → tokens. */
  series: number[][];
  /** The `top` experts with the most tokens that carried any; hottest first. */
  top: HotExpert[];
}

/**
 * Activation of one layer; `vectors[bucket]` is the expert-token vector of that bucket
 * (shorter vectors padded with 0 to `experts`); pure.
 */
export function layerActivation(
  layer: number,
  vectors: readonly (readonly number[])[],
  options: { experts?: number; top: number },
): LayerActivation {
  if (!(Number.isInteger(options.top) && options.top >= 1)) {
    throw new RangeError(`Cannot rank experts: top must be an integer >= 1, got ${options.top}`);
  }
  const experts = options.experts ?? Math.max(0, ...vectors.map((v) => v.length));
  const series = Array.from(
    { length: experts },
    (_, expert) => vectors.map((vector) => vector[expert] ?? 0),
  );
  const expertTotals = series.map((values) => values.reduce((sum, v) => sum + v, 0));
  const totals = vectors.map((_, b) => series.reduce((sum, values) => sum + values[b]!, 0));
  const all = expertTotals.reduce((sum, v) => sum + v, 0);
  const top = expertTotals
    .map((total, expert) => ({ expert, total }))
    .filter(({ total }) => total > 0)
    .sort((a, b) => b.total - a.total || a.expert - b.expert)
    .slice(0, options.top)
    .map(({ expert, total }) => ({
      expert,
      total,
      share: all > 0 ? total / all : 0,
      series: series[expert]!,
    }));
  return { layer, experts, totals, expertTotals, series, top };
}
