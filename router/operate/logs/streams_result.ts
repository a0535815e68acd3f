/**
 * @module Collects matching entries into Loki's `query_range` answer for log queries:
 * `{status: "success", data: {resultType: "streams", result: [{stream, values}]}}`,
 * `values` being `[<unix ns as a string>, <line>]`.
 *
 * `limit` bounds the entries across all streams, keeping the newest (`backward`) or the
 * oldest (`forward`) ones, like Loki. Memory stays O(limit): entries are buffered and,
 * whenever the buffer doubles past `limit`, sorted and cut back. Each stream's values
 * are ordered by `direction`; streams are ordered by their labels.
 */
import type { Direction } from "./query_range_params.ts";

/** One stream of a `streams` result. */
export interface StreamResult {
  stream: Record<string, string>;
  values: [string, string][];
}

/** Loki's `query_range` body for a log query. */
export interface StreamsResponse {
  status: "success";
  data: { resultType: "streams"; result: StreamResult[] };
  /** Notes about the answer (Loki uses the same field). */
  warnings?: string[];
}

/** A matching entry. */
export interface TimedEntry {
  ns: bigint;
  labels: Record<string, string>;
  line: string;
}

interface Ranked extends TimedEntry {
  seq: number;
}

/** Keeps the `limit` entries a query returns, in any input order. */
export class EntryCollector {
  readonly #limit: number;
  readonly #direction: Direction;
  #entries: Ranked[] = [];
  #seq = 0;
  #cutoff: bigint | undefined;

  constructor(limit: number, direction: Direction) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(
        `Cannot collect log entries: limit must be a positive integer, got ${limit}`,
      );
    }
    this.#limit = limit;
    this.#direction = direction;
  }

  /** Adds a matching entry. */
  add(entry: TimedEntry): void {
    this.#entries.push({ ...entry, seq: this.#seq++ });
    if (this.#entries.length >= 2 * this.#limit) this.#trim();
  }

  /**
   * Whether an entry at `ns` could still be kept: false once `limit` better entries are
   * known (checked against the last cut, so it is cheap; an equal time loses to earlier
   * arrivals). Lets readers skip the pipeline for lines that cannot make it.
   */
  wants(ns: bigint): boolean {
    if (this.#cutoff === undefined) return true;
    return this.#direction === "backward" ? ns > this.#cutoff : ns < this.#cutoff;
  }

  /** The answer body. */
  response(warnings: string[] = []): StreamsResponse {
    this.#trim();
    const streams = new Map<string, StreamResult>();
    for (const entry of this.#entries) {
      const key = labelsKey(entry.labels);
      let stream = streams.get(key);
      if (!stream) streams.set(key, stream = { stream: sortedLabels(entry.labels), values: [] });
      stream.values.push([String(entry.ns), entry.line]);
    }
    const result = [...streams.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map((
      [, s],
    ) => s);
    return {
      status: "success",
      data: { resultType: "streams", result },
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  }

  /** Sorts best-first (by time, then arrival) and drops everything past `limit`. */
  #trim(): void {
    const sign = this.#direction === "backward" ? -1 : 1;
    this.#entries.sort((a, b) => (a.ns === b.ns ? a.seq - b.seq : a.ns < b.ns ? -sign : sign));
    if (this.#entries.length > this.#limit) this.#entries.length = this.#limit;
    if (this.#entries.length === this.#limit) this.#cutoff = this.#entries.at(-1)!.ns;
  }
}

function sortedLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.keys(labels).sort().map((name) => [name, labels[name]!]));
}

/** `{a="1", b="2"}`: labels sorted by name, Prometheus style (also a stable map key). */
export function labelsKey(labels: Readonly<Record<string, string>>): string {
  const pairs = Object.keys(labels).sort().map((name) => `${name}=${JSON.stringify(labels[name])}`);
  return `{${pairs.join(", ")}}`;
}
