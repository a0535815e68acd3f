/**
 * @module The parameters of a log query (`query_range`), read like Loki reads them.
 *
 * - `end`: default now. `start`: default `end - since`, `since` default `1h`.
 *   Range is `[start, end)`: start inclusive, end exclusive, like Loki.
 * - A time is RFC3339 (`2024-05-01T10:00:00Z`, fractions down to ns), a unix time in
 *   seconds with a fraction (`1714557600.25`), or an integer unix time whose digit count
 *   tells the unit: up to 10 digits seconds, 11–13 milliseconds, 14–16 microseconds,
 *   more nanoseconds. (Loki itself reads every integer over 10 digits as nanoseconds; the
 *   router forwards nanoseconds, so both paths agree.)
 * - `limit`: default 100, 1…5000 (Loki's default `max_entries_limit_per_query`).
 * - `direction`: `backward` (newest first, the default) or `forward`.
 */

/** Order of entries, and which end of the range `limit` keeps. */
export type Direction = "forward" | "backward";

/** A validated time range and result bounds. */
export interface QueryRange {
  startNs: bigint;
  endNs: bigint;
  limit: number;
  direction: Direction;
}

/** Default `limit`. */
export const DEFAULT_LIMIT = 100;
/** Largest `limit`. */
export const MAX_LIMIT = 5000;

const RFC3339 = /^(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)/y;
const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
  y: 31_536_000_000,
};

/** Reads `start`, `end`, `since`, `limit`, `direction`; throws `RangeError` naming the field. */
export function parseQueryRange(params: URLSearchParams, nowMs: number): QueryRange {
  const endNs = timeParam(params, "end") ?? BigInt(Math.round(nowMs)) * 1_000_000n;
  const since = params.get("since");
  const sinceMs = since === null || since === ""
    ? 3_600_000
    : field("since", () => parseDurationMs(since));
  const startNs = timeParam(params, "start") ?? endNs - BigInt(Math.round(sinceMs)) * 1_000_000n;
  if (endNs <= startNs) {
    throw new RangeError("end: must be after start (the range is [start, end))");
  }
  const limitText = params.get("limit");
  let limit = DEFAULT_LIMIT;
  if (limitText !== null && limitText !== "") {
    if (!/^\d+$/.test(limitText)) {
      throw new RangeError(`limit: must be a positive integer, got "${limitText}"`);
    }
    limit = Number(limitText);
    if (limit < 1 || limit > MAX_LIMIT) {
      throw new RangeError(`limit: must be between 1 and ${MAX_LIMIT}, got ${limitText}`);
    }
  }
  const direction = (params.get("direction") || "backward").toLowerCase();
  if (direction !== "forward" && direction !== "backward") {
    throw new RangeError(
      `direction: must be "forward" or "backward", got "${params.get("direction")}"`,
    );
  }
  return { startNs, endNs, limit, direction };
}

/** A time in any accepted form → unix nanoseconds; throws `RangeError` when unreadable. */
export function parseTimestampNs(text: string): bigint {
  const value = text.trim();
  const rfc = RFC3339.exec(value);
  if (rfc) {
    const ms = Date.parse(`${rfc[1]!.replace(/[t ]/, "T")}${rfc[3]!.toUpperCase()}`);
    if (Number.isNaN(ms)) throw new RangeError(`"${text}" is not a valid RFC3339 time`);
    const fraction = BigInt((rfc[2] ?? ".").slice(1).padEnd(9, "0"));
    return BigInt(ms) * 1_000_000n + fraction;
  }
  const decimal = /^(\d+)\.(\d+)$/.exec(value);
  if (decimal) {
    return BigInt(decimal[1]!) * 1_000_000_000n + BigInt(decimal[2]!.slice(0, 9).padEnd(9, "0"));
  }
  if (/^\d+$/.test(value)) {
    const digits = value.replace(/^0+(?=\d)/, "").length;
    const scale = digits <= 10
      ? 1_000_000_000n
      : digits <= 13
      ? 1_000_000n
      : digits <= 16
      ? 1000n
      : 1n;
    return BigInt(value) * scale;
  }
  throw new RangeError(`"${text}" is not an RFC3339 time or a unix timestamp`);
}

/** A Prometheus-style duration (`1h`, `90s`, `1h30m`, `500ms`, `2d`) → milliseconds. */
export function parseDurationMs(text: string): number {
  const value = text.trim();
  let total = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < value.length) {
    const part = DURATION_PART.exec(value);
    if (!part) throw new RangeError(`"${text}" is not a duration like "15m", "1h" or "1h30m"`);
    total += Number(part[1]) * UNIT_MS[part[2]!]!;
  }
  if (value === "" || total <= 0) throw new RangeError(`"${text}" is not a positive duration`);
  return total;
}

function timeParam(params: URLSearchParams, name: "start" | "end"): bigint | undefined {
  const text = params.get(name);
  if (text === null || text === "") return undefined;
  return field(name, () => parseTimestampNs(text));
}

function field<T>(name: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof RangeError) throw new RangeError(`${name}: ${error.message}`);
    throw error;
  }
}

/** Loki's (and Prometheus') limit on the points of one series. */
export const MAX_POINTS = 11_000;

/**
 * Reads the range of a metric query: `start`, `end` (both inclusive; `start` may equal
 * `end`), `since` like a log query, and `step` as a duration (`30s`, `1m`) or seconds
 * (`15`, `0.5`); without it, Loki's default `max(floor((end - start) / 250 s), 1) s`.
 * At most {@linkcode MAX_POINTS} steps. Throws `RangeError` naming the field.
 */
export function parseMetricRange(
  params: URLSearchParams,
  nowMs: number,
): { startNs: bigint; endNs: bigint; stepNs: bigint } {
  const endNs = timeParam(params, "end") ?? BigInt(Math.round(nowMs)) * 1_000_000n;
  const since = params.get("since");
  const sinceMs = since === null || since === ""
    ? 3_600_000
    : field("since", () => parseDurationMs(since));
  const startNs = timeParam(params, "start") ?? endNs - BigInt(Math.round(sinceMs)) * 1_000_000n;
  if (endNs < startNs) throw new RangeError("end: must not be before start");
  const stepText = params.get("step");
  let stepNs: bigint;
  if (stepText === null || stepText === "") {
    const seconds = Math.max(Math.floor(Number(endNs - startNs) / 1e9 / 250), 1);
    stepNs = BigInt(seconds) * 1_000_000_000n;
  } else {
    const seconds = /^\d+(\.\d+)?$/.test(stepText.trim())
      ? Number(stepText)
      : field("step", () => parseDurationMs(stepText)) / 1000;
    if (!(seconds > 0)) {
      throw new RangeError(
        `step: must be a positive duration or number of seconds, got "${stepText}"`,
      );
    }
    stepNs = BigInt(Math.round(seconds * 1e9));
  }
  if ((endNs - startNs) / stepNs >= BigInt(MAX_POINTS)) {
    throw new RangeError(
      `step: exceeded maximum resolution of ${MAX_POINTS} points per timeseries; ` +
        "try a larger step",
    );
  }
  return { startNs, endNs, stepNs };
}
