/**
 * @module Turns a load run's per-request timeline into per-second time series
 * (throughput and latency), the rows of `throughput.csv` and `latency.csv`.
 */
import { quantile } from "../stats.ts";

/** One second of one configuration's run. */
export interface SecondRow {
  /** Seconds since the phase started (the second's start). */
  t: number;
  requestsPerS: number;
  tokensPerS: number;
  /** Latency percentiles (ms) of requests completed in this second; NaN if none. */
  p50: number;
  p99: number;
}

/** Per-second rows from `[completion s, latency ms, rows]` entries, 0 … last second. */
export function perSecond(
  timeline: readonly (readonly [number, number, number])[],
  seconds: number,
): SecondRow[] {
  const count = Math.max(1, Math.ceil(seconds));
  const buckets = Array.from({ length: count }, () => ({ rows: 0, latencies: [] as number[] }));
  for (const [at, ms, rows] of timeline) {
    const bucket = buckets[Math.min(count - 1, Math.max(0, Math.floor(at)))]!;
    bucket.rows += rows;
    bucket.latencies.push(ms);
  }
  return buckets.map((bucket, t) => ({
    t,
    requestsPerS: bucket.latencies.length,
    tokensPerS: bucket.rows,
    p50: quantile(bucket.latencies, 0.5),
    p99: quantile(bucket.latencies, 0.99),
  }));
}

/** CSV text: a header line, then one line per row (NaN written as an empty cell). */
export function toCsv(header: readonly string[], rows: readonly (readonly (string | number)[])[]) {
  const cell = (value: string | number) =>
    typeof value === "number" ? (Number.isNaN(value) ? "" : String(value)) : value;
  return [header.join(","), ...rows.map((row) => row.map(cell).join(","))].join("\n") + "\n";
}
