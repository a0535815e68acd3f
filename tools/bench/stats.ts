/** @module Small statistics helpers for benchmarks: percentiles and summaries. */

/** The q-quantile (0..1) of `values` by nearest rank; NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** Latency summary in ms. */
export interface LatencySummary {
  p50: number;
  p95: number;
  p99: number;
  mean: number;
}

/** Summarises latencies (ms). */
export function summarize(latencies: readonly number[]): LatencySummary {
  const mean = latencies.reduce((sum, v) => sum + v, 0) / Math.max(latencies.length, 1);
  return {
    p50: quantile(latencies, 0.5),
    p95: quantile(latencies, 0.95),
    p99: quantile(latencies, 0.99),
    mean,
  };
}

/** Formats rows as an aligned text table. */
export function formatTable(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? "").length)));
  const line = (row: string[]) => row.map((cell, i) => cell.padStart(widths[i]!)).join("  ");
  return [line(cells[0]!), line(widths.map((w) => "-".repeat(w))), ...cells.slice(1).map(line)]
    .join("\n");
}

/** Rounds to `digits` decimals. */
export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
