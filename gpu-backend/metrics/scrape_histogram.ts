/**
 * @module Histograms and summaries whose buckets are computed at scrape time from
 * counters the backend already keeps (e.g. the micro-batcher's formed-batch counts),
 * registered on a prom-client registry next to its own metrics.
 *
 * prom-client's `Histogram` only learns values one `observe()` at a time on the hot
 * path; here the distribution already exists, so this metric writes it out directly:
 * cumulative `_bucket{le}` series ending in `le="+Inf"`, then `_sum` and `_count` (a
 * summary writes only `_sum` and `_count`, which Prometheus accepts: no quantiles).
 */
import type { Gauge, Registry } from "prom-client";

/** One labelled distribution: per-bucket (non-cumulative) counts and the sum. */
export interface Distribution<L extends string> {
  labels: Record<L, string>;
  /**
   * Histogram: `counts[i]` = observations in (`bounds[i-1]`, `bounds[i]`], and
   * `counts[bounds.length]` those above every bound. Summary: their total is the count.
   */
  counts: readonly number[];
  sum: number;
}

/** Options of {@linkcode ScrapeHistogram}. */
export interface ScrapeHistogramOptions<L extends string> {
  name: string;
  help: string;
  /** `histogram` writes buckets; `summary` only `_sum` and `_count`. */
  type: "histogram" | "summary";
  /** Upper bounds, increasing (histogram only). */
  bounds?: readonly number[];
  /** Distributions now, one per label set. */
  read: () => Distribution<L>[];
}

/** A sample in prom-client's metric object shape. */
interface PromValue {
  value: number;
  labels: Record<string, string | number>;
  metricName: string;
}

/** A histogram or summary computed from existing counts when scraped. */
export class ScrapeHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type: "histogram" | "summary";
  /** prom-client's aggregator name (used only when merging cluster registries). */
  readonly aggregator = "sum";
  readonly #bounds: readonly number[];
  readonly #read: () => Distribution<L>[];

  constructor(registry: Registry, options: ScrapeHistogramOptions<L>) {
    const bounds = options.bounds ?? [];
    if (options.type === "histogram" && bounds.length === 0) {
      throw new TypeError(`Cannot create histogram "${options.name}": bounds are empty`);
    }
    if (bounds.some((bound, i) => i > 0 && bound <= bounds[i - 1]!)) {
      throw new RangeError(
        `Cannot create histogram "${options.name}": bounds must increase, got ${bounds}`,
      );
    }
    this.name = options.name;
    this.help = options.help;
    this.type = options.type;
    this.#bounds = bounds;
    this.#read = options.read;
    // The registry reads metrics through name, help, type and get(), which this class has.
    registry.registerMetric(this as unknown as Gauge);
  }

  /** The metric object prom-client's registry formats. */
  get(): Promise<{
    name: string;
    help: string;
    type: string;
    values: PromValue[];
    aggregator: string;
  }> {
    const values = this.#read().flatMap((distribution) => this.#values(distribution));
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      values,
      aggregator: this.aggregator,
    });
  }

  #values(distribution: Distribution<L>): PromValue[] {
    const { labels, counts, sum } = distribution;
    const total = counts.reduce((a, b) => a + b, 0);
    const values: PromValue[] = [];
    if (this.type === "histogram") {
      let cumulative = 0;
      this.#bounds.forEach((bound, i) => {
        cumulative += counts[i] ?? 0;
        values.push({
          metricName: `${this.name}_bucket`,
          labels: { ...labels, le: bound },
          value: cumulative,
        });
      });
      values.push({
        metricName: `${this.name}_bucket`,
        labels: { ...labels, le: "+Inf" },
        value: total,
      });
    }
    values.push({ metricName: `${this.name}_sum`, labels, value: sum });
    values.push({ metricName: `${this.name}_count`, labels, value: total });
    return values;
  }
}
