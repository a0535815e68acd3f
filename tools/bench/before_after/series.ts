/**
 * @module Turns a load run's per-request timeline into per-second time series
 * (throughput, goodput and latency), the rows of `throughput.csv` and `latency.csv`.
 */
import { quantile } from "../stats.ts";

/** One second of one phase. */
export interface SecondRow {
  /** Seconds since the phase started (the second's start). */
  t: number;
  requestsPerS: number;
  tokensPerS: number;
  /** Requests completed in this second within the SLO. */
  goodPerS: number;
  /** Latency percentiles and mean (ms) of requests completed in this second; NaN if none. */
  p50: number;
  p90: number;
  p99: number;
  mean: number;
}

/** Per-second rows from `[completion s, latency ms, rows]` entries, 0 … last second. */
export function perSecond(
  timeline: readonly (readonly [number, number, number])[],
  seconds: number,
  sloMs: number,
): SecondRow[] {
  const count = Math.max(1, Math.ceil(seconds));
  const buckets = Array.from({ length: count }, () => ({ rows: 0, latencies: [] as number[] }));
  for (const [at, ms, rows] of timeline) {
    const bucket = buckets[Math.min(count - 1, Math.max(0, Math.floor(at)))]!;
    bucket.rows += rows;
    bucket.latencies.push(ms);
  }
  return buckets.map(({ rows, latencies }, t) => ({
    t,
    requestsPerS: latencies.length,
    tokensPerS: rows,
    goodPerS: latencies.filter((ms) => ms <= sloMs).length,
    p50: quantile(latencies, 0.5),
    p90: quantile(latencies, 0.9),
    p99: quantile(latencies, 0.99),
    mean: latencies.length === 0 ? NaN : latencies.reduce((a, b) => a + b, 0) / latencies.length,
  }));
}

/**
 * CSV text: `#`-prefixed header lines (the command, commit, date, machine), a column
 * line, then one line per row (NaN written as an empty cell).
 */
export function toCsv(
  header: readonly string[],
  rows: readonly (readonly (string | number)[])[],
  comments: readonly string[] = [],
) {
  const cell = (value: string | number) =>
    typeof value === "number" ? (Number.isNaN(value) ? "" : String(value)) : value;
  return [
    ...comments.map((line) => `# ${line}`.trimEnd()),
    header.join(","),
    ...rows.map((row) => row.map(cell).join(",")),
  ].join("\n") + "\n";
}
