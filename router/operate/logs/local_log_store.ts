/**
 * @module The embedded log store: evaluates the LogQL subset (log and metric queries) over the local JSON-lines
 * log files under `log.dir` (`<service>[-<instance>].log` and its rotations `.1`, `.2`…;
 * every file whose name contains `.log`, gzip-compressed ones included).
 *
 * Files are streamed line by line, never loaded whole; only the best `limit` matches are
 * held. A file last modified before `start` is skipped unopened (its lines are older).
 * Lines that are not JSON objects with a `ts` are skipped and counted in a warning.
 * Stream labels of a line are `service`, `level` and, on a backend's lines, `backend` (its
 * id): the labels the log shipper gives Loki, so a query means the same in both stores.
 */
import { join } from "node:path";
import { type CompiledQuery, compileQuery } from "./log_pipeline.ts";
import type { LogQueryRequest, LogStore, MetricQueryRequest } from "./log_store.ts";
import type { MatrixResponse } from "./matrix_result.ts";
import { evaluateMetric, SampleCollector } from "./metric_eval.ts";
import { EntryCollector, type StreamsResponse } from "./streams_result.ts";
import { parseTimestampNs } from "./query_range_params.ts";

/** Options of {@linkcode LocalLogStore}. */
export interface LocalLogStoreOptions {
  /** `log.dir`; `""` means logs go to stdout only (queries answer nothing, with a warning). */
  dir: string;
  /** Longer lines are skipped as malformed; default 1 MiB. */
  maxLineBytes?: number;
}

/** One parsed local log line: its time, stream labels and the parsed JSON object. */
export interface LocalRecord {
  ns: bigint;
  stream: Record<string, string>;
  value: Record<string, unknown>;
}

/** Reads a local JSON log line; `undefined` when it is not one. */
export function parseLocalLine(line: string): LocalRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  let ns: bigint;
  try {
    if (typeof record["ts"] === "string") ns = parseTimestampNs(record["ts"]);
    else if (typeof record["ts"] === "number") ns = BigInt(Math.round(record["ts"] * 1e6));
    else return undefined;
  } catch {
    return undefined;
  }
  const stream: Record<string, string> = {};
  for (const name of ["service", "level"] as const) {
    const label = record[name];
    if (typeof label === "string" && label !== "") stream[name] = label;
  }
  // Only a backend's own lines carry the `backend` label; a router request line's
  // `backend` field (the entry backend) is data, not the stream.
  const backend = record["backend"];
  if (stream["service"] === "backend" && typeof backend === "string" && backend !== "") {
    stream["backend"] = backend;
  }
  return { ns, stream, value: record };
}

/** The embedded store; see the module doc. */
export class LocalLogStore implements LogStore {
  readonly kind = "local";
  readonly #dir: string;
  readonly #maxLineBytes: number;

  constructor(options: LocalLogStoreOptions) {
    this.#dir = options.dir;
    this.#maxLineBytes = options.maxLineBytes ?? 1024 * 1024;
  }

  async queryRange(request: LogQueryRequest): Promise<StreamsResponse> {
    const { startNs, endNs, limit, direction } = request.range;
    const collector = new EntryCollector(limit, direction);
    const query = compileQuery(request.parsed);
    const warnings = await this.#scan(startNs - 1n, query, (record, line) => {
      if (record.ns < startNs || record.ns >= endNs || !collector.wants(record.ns)) return;
      if (!query.matchesStream(record.stream)) return;
      const entry = query.process(line, record.stream, { value: record.value });
      if (entry) collector.add({ ns: record.ns, ...entry });
    });
    return collector.response(warnings);
  }

  async queryMetric(request: MetricQueryRequest): Promise<MatrixResponse> {
    const collector = new SampleCollector(request.parsed, request.range);
    const warnings = await this.#scan(collector.fromNs, collector.log, (record, line) => {
      collector.add(record.ns, line, record.stream, { value: record.value });
    });
    return evaluateMetric(request.parsed, collector, request.range, warnings);
  }

  /**
   * Feeds every parsed line that may pass `query`'s leading line filters to `visit`,
   * skipping files last modified at or before `afterNs`; returns the warnings.
   */
  async #scan(
    afterNs: bigint,
    query: CompiledQuery,
    visit: (record: LocalRecord, line: string) => void,
  ): Promise<string[]> {
    if (this.#dir === "") {
      return ['log.dir is "": logs go to stdout only, there are no log files to query'];
    }
    const files = await logFiles(this.#dir);
    if (files === undefined) {
      return [`log.dir "${this.#dir}" does not exist (yet): no log files to query`];
    }
    let malformed = 0;
    for (const file of files) {
      if (file.mtimeNs !== undefined && file.mtimeNs <= afterNs) continue;
      for await (const line of this.#lines(file.path)) {
        if (line === undefined) {
          malformed++;
          continue;
        }
        if (line.trim() === "" || !query.lineMayMatch(line)) continue;
        const record = parseLocalLine(line);
        if (record === undefined) {
          malformed++;
          continue;
        }
        visit(record, line);
      }
    }
    return malformed > 0 ? [`skipped ${malformed} malformed line(s) in ${this.#dir}`] : [];
  }

  /** Lines of a file (gunzipped when `.gz`); `undefined` stands for an over-long line. */
  async *#lines(path: string): AsyncGenerator<string | undefined> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return; // rotated away meanwhile
      throw error;
    }
    let stream: ReadableStream<Uint8Array> = file.readable;
    if (path.endsWith(".gz")) {
      stream = stream.pipeThrough(
        new DecompressionStream("gzip") as TransformStream<Uint8Array, Uint8Array>,
      );
    }
    yield* splitLines(stream.pipeThrough(new TextDecoderStream()), this.#maxLineBytes);
  }
}

/** Splits text chunks into lines (`\n` or `\r\n`); an over-long line yields `undefined`. */
export async function* splitLines(
  chunks: ReadableStream<string>,
  maxLength: number,
): AsyncGenerator<string | undefined> {
  let buffer = "";
  let skipping = false;
  for await (const chunk of chunks) {
    let start = 0;
    for (let newline = chunk.indexOf("\n"); newline >= 0; newline = chunk.indexOf("\n", start)) {
      const piece = chunk.slice(start, newline);
      start = newline + 1;
      if (skipping) {
        skipping = false;
        buffer = "";
        continue;
      }
      const line = buffer + piece;
      buffer = "";
      yield line.endsWith("\r") ? line.slice(0, -1) : line;
    }
    if (skipping) continue;
    buffer += chunk.slice(start);
    if (buffer.length > maxLength) {
      skipping = true;
      buffer = "";
      yield undefined;
    }
  }
  if (!skipping && buffer !== "") yield buffer;
}

interface LogFile {
  path: string;
  mtimeNs: bigint | undefined;
}

/** Every `*.log*` file under `dir` (recursively); `undefined` when `dir` does not exist. */
async function logFiles(dir: string): Promise<LogFile[] | undefined> {
  const out: LogFile[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) out.push(...(await logFiles(path)) ?? []);
      else if (entry.isFile && /\.log(\.|$)/.test(entry.name)) {
        const mtime = await Deno.stat(path).then((s) => s.mtime, () => null);
        out.push({ path, mtimeNs: mtime ? BigInt(mtime.getTime()) * 1_000_000n : undefined });
      }
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}
