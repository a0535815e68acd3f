/**
 * @module Names of traffic series, as values and as the strings the API takes.
 *
 * - `requests:<model>` / `tokens:<model>`: per model, every request type together.
 * - `requests:<model>:<type>` / `tokens:<model>:<type>`: one request type; requests
 *   without a type count as {@linkcode UNTYPED}.
 * - `expert:<model>:L<layer>:E<expert>`: tokens routed to one expert of one layer.
 *
 * Model and type names are percent-encoded in the string form (`encodeURIComponent`),
 * so a `:` inside a name cannot be mistaken for a separator.
 */

/** Request type of requests that carry none. */
export const UNTYPED = "untyped";

/** A volume series: requests or tokens, of a model or one of its request types. */
export interface VolumeSeriesKey {
  kind: "requests" | "tokens";
  model: string;
  /** Absent: every request type together. */
  requestType?: string;
}

/** Tokens routed to one expert of one layer. */
export interface ExpertSeriesKey {
  kind: "expert";
  model: string;
  layer: number;
  expert: number;
}

/** Any traffic series. */
export type SeriesKey = VolumeSeriesKey | ExpertSeriesKey;

/** The string form, e.g. `requests:demo-moe:chat` or `expert:demo-moe:L0:E3`. */
export function formatSeriesKey(key: SeriesKey): string {
  const model = encodeURIComponent(key.model);
  if (key.kind === "expert") return `expert:${model}:L${key.layer}:E${key.expert}`;
  return key.requestType === undefined
    ? `${key.kind}:${model}`
    : `${key.kind}:${model}:${encodeURIComponent(key.requestType)}`;
}

function decode(part: string, what: string, text: string): string {
  let value: string;
  try {
    value = decodeURIComponent(part);
  } catch {
    throw new TypeError(`Cannot parse series "${text}": ${what} is not valid percent-encoding`);
  }
  if (value === "") throw new TypeError(`Cannot parse series "${text}": ${what} is empty`);
  return value;
}

/** Parses the string form; throws a `TypeError` naming what is wrong. */
export function parseSeriesKey(text: string): SeriesKey {
  const parts = text.split(":");
  const [kind, model] = parts;
  if (kind === "requests" || kind === "tokens") {
    if (parts.length < 2 || parts.length > 3) {
      throw new TypeError(
        `Cannot parse series "${text}": expected "${kind}:<model>" or "${kind}:<model>:<type>"`,
      );
    }
    const key: VolumeSeriesKey = { kind, model: decode(model!, "model", text) };
    if (parts.length === 3) key.requestType = decode(parts[2]!, "request type", text);
    return key;
  }
  if (kind === "expert") {
    const layer = /^L(\d{1,6})$/.exec(parts[2] ?? "");
    const expert = /^E(\d{1,6})$/.exec(parts[3] ?? "");
    if (parts.length !== 4 || layer === null || expert === null) {
      throw new TypeError(
        `Cannot parse series "${text}": expected "expert:<model>:L<layer>:E<expert>"`,
      );
    }
    return {
      kind,
      model: decode(model!, "model", text),
      layer: Number(layer[1]),
      expert: Number(expert[1]),
    };
  }
  throw new TypeError(
    `Cannot parse series "${text}": kind must be "requests", "tokens" or "expert", got "${kind}"`,
  );
}
