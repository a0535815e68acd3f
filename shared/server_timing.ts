/**
 * @module The `Server-Timing` header (W3C Server Timing: `name;dur=<ms>;desc="…"`,
 * comma-separated): how router and backend tell a client where a request's time went.
 */

/** The header's name. */
export const SERVER_TIMING_HEADER = "server-timing";

/** One metric of a `Server-Timing` header. */
export interface TimingMetric {
  /** A token: letters, digits and `-`. */
  name: string;
  /** Milliseconds. */
  ms: number;
  desc?: string;
}

/** `metrics` as a header value, durations in ms with three decimals. */
export function formatServerTiming(metrics: readonly TimingMetric[]): string {
  return metrics.map(({ name, ms, desc }) =>
    `${name};dur=${Math.max(ms, 0).toFixed(3)}` +
    (desc === undefined ? "" : `;desc="${desc.replace(/["\\]/g, "")}"`)
  ).join(", ");
}

/** The metrics of a header value (unparsable parts are skipped; no `dur` reads as 0). */
export function parseServerTiming(value: string | null): TimingMetric[] {
  if (!value) return [];
  const metrics: TimingMetric[] = [];
  for (const part of value.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/)) {
    const [name, ...params] = part.split(";").map((p) => p.trim());
    if (!name || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) continue;
    const metric: TimingMetric = { name, ms: 0 };
    for (const param of params) {
      const at = param.indexOf("=");
      if (at < 0) continue;
      const key = param.slice(0, at).trim().toLowerCase();
      const raw = param.slice(at + 1).trim();
      if (key === "dur" && Number.isFinite(Number(raw))) metric.ms = Number(raw);
      if (key === "desc") metric.desc = raw.replace(/^"(.*)"$/, "$1");
    }
    metrics.push(metric);
  }
  return metrics;
}

/** `value` (a header value or null) with `metrics` appended. */
export function appendServerTiming(value: string | null, metrics: readonly TimingMetric[]): string {
  const added = formatServerTiming(metrics);
  return value ? `${value}, ${added}` : added;
}

/** The duration of metric `name` in a header value, without parsing the rest; null if absent. */
export function serverTimingMs(value: string | null, name: string): number | null {
  if (!value) return null;
  const match = new RegExp(`(?:^|,)\\s*${name};dur=([0-9.]+)`).exec(value);
  return match ? Number(match[1]) : null;
}
