/**
 * @module Grafana Loki's JSON push body (`POST /loki/api/v1/push`), built from our JSON
 * log lines. Pure functions.
 *
 * Loki's documented shape: `{"streams":[{"stream":{<labels>},"values":[["<unix epoch
 * ns, as a string>","<log line>"], …]}]}`. Entries with equal label sets share one
 * stream, in arrival order. Labels stay low-cardinality — `service`, `backend` (a
 * backend's own id), `level` — everything else stays inside the JSON line, where LogQL's
 * `| json` reads it.
 */

/** One line bound for Loki. */
export interface LokiEntry {
  labels: Readonly<Record<string, string>>;
  /** Unix epoch nanoseconds as a decimal string. */
  ns: string;
  /** The log line without its trailing newline. */
  line: string;
}

/** The push request body. */
export interface LokiPushBody {
  streams: { stream: Record<string, string>; values: [string, string][] }[];
}

/** Groups entries into streams by label set. */
export function lokiPushBody(entries: readonly LokiEntry[]): LokiPushBody {
  const streams = new Map<string, LokiPushBody["streams"][number]>();
  for (const entry of entries) {
    const key = JSON.stringify(entry.labels);
    let stream = streams.get(key);
    if (stream === undefined) {
      stream = { stream: { ...entry.labels }, values: [] };
      streams.set(key, stream);
    }
    stream.values.push([entry.ns, entry.line]);
  }
  return { streams: [...streams.values()] };
}

/** `createJsonLogger` lines start `{"ts":"<ISO>","level":"<level>"`; read both without parsing. */
const HEAD = /^\{"ts":"([^"]{10,40})","level":"([a-z]{1,10})"/;

/**
 * The Loki entry of one JSON log line: its `ts` as nanoseconds, its `level` as a label
 * next to `labels`. A line of another shape gets `nowMs` and level `info`.
 */
export function lokiEntryFromLine(
  line: string,
  labels: Readonly<Record<string, string>>,
  nowMs: number,
): LokiEntry {
  const text = line.endsWith("\n") ? line.slice(0, -1) : line;
  const head = HEAD.exec(text);
  const parsedMs = head ? Date.parse(head[1]!) : NaN;
  const ms = Number.isFinite(parsedMs) ? parsedMs : nowMs;
  return {
    labels: { ...labels, level: head ? head[2]! : "info" },
    ns: `${Math.trunc(ms)}000000`,
    line: text,
  };
}
