/**
 * @module Forwards log queries to Grafana Loki's `GET /loki/api/v1/query_range`, with
 * the `X-Scope-OrgID` tenant header when `loki.tenant` is set and `loki.timeout` as the
 * deadline. Loki's body is passed through unchanged.
 *
 * Plain `fetch` rather than a Loki client: the one maintained query client on npm
 * (`@myunisoft/loki` 6) sends no tenant header, has no timeout or abort signal, reshapes
 * the response (so the API could not answer in Loki's own shape) and pulls in an
 * undici-based HTTP stack; one GET with four parameters needs none of it.
 */
import type { FetchLike } from "../runtime/fetch_like.ts";
import { type LogQueryRequest, type LogStore, LokiQueryError } from "./log_store.ts";
import type { StreamsResponse } from "./streams_result.ts";

/** Options of {@linkcode LokiLogStore}. */
export interface LokiLogStoreOptions {
  /** `loki.url`, e.g. `http://loki:3100` (a path prefix is kept). */
  url: string;
  /** `loki.tenant`, sent as `X-Scope-OrgID`. */
  tenant?: string | undefined;
  /** `loki.timeout` in ms; default 5000. */
  timeoutMs?: number;
  /** Default: the global `fetch`. */
  fetch?: FetchLike;
}

const MAX_MESSAGE = 1000;

/** A {@linkcode LogStore} backed by Loki; see the module doc. */
export class LokiLogStore implements LogStore {
  readonly kind = "loki";
  readonly #endpoint: URL;
  readonly #tenant: string | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: FetchLike;

  constructor(options: LokiLogStoreOptions) {
    const base = options.url.endsWith("/") ? options.url : `${options.url}/`;
    this.#endpoint = new URL("loki/api/v1/query_range", base);
    this.#tenant = options.tenant;
    this.#timeoutMs = options.timeoutMs ?? 5000;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  async queryRange(request: LogQueryRequest): Promise<StreamsResponse> {
    const url = new URL(this.#endpoint);
    url.searchParams.set("query", request.query);
    url.searchParams.set("start", String(request.range.startNs));
    url.searchParams.set("end", String(request.range.endNs));
    url.searchParams.set("limit", String(request.range.limit));
    url.searchParams.set("direction", request.range.direction);
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.#tenant) headers["x-scope-orgid"] = this.#tenant;
    const where = `Loki at ${this.#endpoint.origin}`;
    let response: Response;
    try {
      response = await this.#fetch(url, { headers, signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (error) {
      if ((error as Error).name === "TimeoutError") {
        throw new LokiQueryError("timeout", `${where} did not answer within ${this.#timeoutMs} ms`);
      }
      throw new LokiQueryError(
        "unreachable",
        `${where} is unreachable: ${(error as Error).message}`,
      );
    }
    const text = await response.text();
    if (!response.ok) {
      throw new LokiQueryError(
        "rejected",
        `${where} answered ${response.status}: ${lokiMessage(text)}`,
        response.status,
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new LokiQueryError(
        "rejected",
        `${where} answered a body that is not JSON`,
        response.status,
      );
    }
    const data = (body as { data?: { resultType?: unknown; result?: unknown } }).data;
    if (data?.resultType !== "streams" || !Array.isArray(data.result)) {
      throw new LokiQueryError(
        "rejected",
        `${where} answered no "streams" result (resultType ${JSON.stringify(data?.resultType)})`,
        response.status,
      );
    }
    return body as StreamsResponse;
  }
}

/** Loki answers errors as plain text, newer versions as `{"error"|"message": …}`. */
function lokiMessage(text: string): string {
  let message = text.trim();
  try {
    const json = JSON.parse(message) as { error?: unknown; message?: unknown };
    const field = json.error ?? json.message;
    if (typeof field === "string") message = field;
  } catch { /* plain text */ }
  if (message === "") return "(empty body)";
  return message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message;
}
