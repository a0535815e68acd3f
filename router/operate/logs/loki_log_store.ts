/**
 * @module Forwards log queries to Grafana Loki's `GET /loki/api/v1/query_range`, with
 * the `X-Scope-OrgID` tenant header when `loki.tenant` is set and `loki.timeout` as the
 * deadline. Loki's body is passed through unchanged: `streams` for log queries, `matrix`
 * for metric queries (with `step` in seconds).
 *
 * Plain `fetch` rather than a Loki client: the one maintained query client on npm
 * (`@myunisoft/loki` 6) sends no tenant header, has no timeout or abort signal, reshapes
 * the response (so the API could not answer in Loki's own shape) and pulls in an
 * undici-based HTTP stack; one GET with four parameters needs none of it.
 */
import type { FetchLike } from "../../runtime/fetch_like.ts";
import {
  type LogQueryRequest,
  type LogStore,
  LokiQueryError,
  type MetricQueryRequest,
} from "./log_store.ts";
import type { StreamsResponse } from "./streams_result.ts";
import type { MatrixResponse } from "./matrix_result.ts";

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
    const body = await this.#get({
      query: request.query,
      start: String(request.range.startNs),
      end: String(request.range.endNs),
      limit: String(request.range.limit),
      direction: request.range.direction,
    }, "streams");
    return body as StreamsResponse;
  }

  async queryMetric(request: MetricQueryRequest): Promise<MatrixResponse> {
    const body = await this.#get({
      query: request.query,
      start: String(request.range.startNs),
      end: String(request.range.endNs),
      step: stepSeconds(request.range.stepNs),
    }, "matrix");
    return body as MatrixResponse;
  }

  /** GETs `query_range` with `params`; the body must carry a `resultType` result. */
  async #get(params: Record<string, string>, resultType: "streams" | "matrix"): Promise<unknown> {
    const url = new URL(this.#endpoint);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
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
    if (data?.resultType !== resultType || !Array.isArray(data.result)) {
      throw new LokiQueryError(
        "rejected",
        `${where} answered no "${resultType}" result (resultType ${
          JSON.stringify(data?.resultType)
        })`,
        response.status,
      );
    }
    return body;
  }
}

/** A step in seconds as Loki reads it (`15`, `0.5`). */
function stepSeconds(stepNs: bigint): string {
  const whole = stepNs / 1_000_000_000n;
  const fraction = stepNs % 1_000_000_000n;
  if (fraction === 0n) return String(whole);
  return `${whole}.${String(fraction).padStart(9, "0").replace(/0+$/, "")}`;
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
