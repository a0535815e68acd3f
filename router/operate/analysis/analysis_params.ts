/**
 * @module Query parameters of the analysis endpoints. Every bad value becomes a
 * `bad_request` naming the parameter.
 *
 * - `from`, `to`: an RFC3339 time or a unix timestamp (seconds, ms, µs or ns by digit
 *   count, as the log API reads them); `from` may also be a duration before `to`
 *   (`30m`, `6h`). Default: the last hour up to now. The range is `[from, to)`.
 * - `layer`: a non-negative integer. `top`: 1…1000, default 5.
 */
import { ApiError } from "../../../shared/errors.ts";
import { parseDurationMs, parseTimestampNs } from "../logs/query_range_params.ts";

/** Default span of a range without `from`. */
export const DEFAULT_SPAN_MS = 3_600_000;
/** Most buckets one query may cover. */
export const MAX_BUCKETS = 10_000;
/** Default and largest `top`. */
export const DEFAULT_TOP = 5;
export const MAX_TOP = 1000;

type Query = (name: string) => string | undefined;

function bad(name: string, message: string): ApiError {
  return new ApiError("bad_request", `Cannot analyse: ${name} ${message}`);
}

function timeMs(name: string, text: string): number {
  try {
    return Number(parseTimestampNs(text) / 1_000_000n);
  } catch (error) {
    throw bad(name, `must be an RFC3339 time or a unix timestamp: ${(error as Error).message}`);
  }
}

/** `[fromMs, toMs)` from `from`/`to`; at most {@linkcode MAX_BUCKETS} buckets of `bucketMs`. */
export function parseRange(query: Query, nowMs: number, bucketMs: number) {
  const toText = query("to");
  const toMs = toText === undefined || toText === "" ? nowMs : timeMs("to", toText);
  const fromText = query("from");
  let fromMs: number;
  if (fromText === undefined || fromText === "") fromMs = toMs - DEFAULT_SPAN_MS;
  else if (/^\d+(\.\d+)?(ms|s|m|h|d|w|y)/.test(fromText.trim())) {
    try {
      fromMs = toMs - parseDurationMs(fromText);
    } catch (error) {
      throw bad("from", `must be a time or a duration before "to": ${(error as Error).message}`);
    }
  } else fromMs = timeMs("from", fromText);
  if (!(fromMs < toMs)) {
    throw bad("from", `must be before to (the range is [from, to)), got ${fromMs} >= ${toMs}`);
  }
  const buckets = Math.ceil((toMs - Math.floor(fromMs / bucketMs) * bucketMs) / bucketMs);
  if (buckets > MAX_BUCKETS) {
    throw bad(
      "from",
      `is too far before to: the range covers ${buckets} buckets of ${bucketMs} ms, at most ${MAX_BUCKETS}`,
    );
  }
  return { fromMs, toMs };
}

/** `layer` as a non-negative integer, `undefined` when absent; checked against `layers`. */
export function parseLayer(query: Query, layers: number | undefined): number | undefined {
  const text = query("layer");
  if (text === undefined || text === "") return undefined;
  if (!/^\d{1,6}$/.test(text)) throw bad("layer", `must be a non-negative integer, got "${text}"`);
  const layer = Number(text);
  if (layers !== undefined && layer >= layers) {
    throw bad("layer", `must be below ${layers} (the model's layers with series), got ${layer}`);
  }
  return layer;
}

/** `top` in 1…{@linkcode MAX_TOP}; default {@linkcode DEFAULT_TOP}. */
export function parseTop(query: Query): number {
  const text = query("top");
  if (text === undefined || text === "") return DEFAULT_TOP;
  const top = /^\d{1,6}$/.test(text) ? Number(text) : NaN;
  if (!(top >= 1 && top <= MAX_TOP)) {
    throw bad("top", `must be an integer from 1 to ${MAX_TOP}, got "${text}"`);
  }
  return top;
}
