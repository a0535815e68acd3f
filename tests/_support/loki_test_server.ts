/**
 * @module A stand-in for Grafana Loki in tests. No Loki server can be installed on these
 * machines (it is neither in Debian nor on npm), so this small `Deno.serve` server
 * implements the parts of Loki's documented HTTP API that Switchyard uses:
 *
 * - `POST /loki/api/v1/push`: the JSON form (`{"streams":[{"stream":{…labels},
 *   "values":[["<unix ns>","<line>"(, {structured metadata})]]}]}`), plain or with
 *   `Content-Encoding: gzip`; answers 204. Protobuf pushes get 415 (not implemented).
 * - `GET /loki/api/v1/query_range`: evaluated with Switchyard's own LogQL-subset
 *   evaluator over what was pushed (so only the subset is understood); answers Loki's
 *   `streams` body, or 400 with a plain-text message as Loki does.
 * - `GET /ready`: `ready`.
 *
 * Tenants are kept apart by `X-Scope-OrgID` (absent → `fake`, Loki's single-tenant
 * name). Every request is recorded in `requests`, and `failNext` / `delayNext` inject a
 * Loki error or a slow answer, for the error paths.
 */
import { LogQLError } from "../../router/logs/logql_ast.ts";
import { parseLogQL } from "../../router/logs/logql_parser.ts";
import { compileQuery } from "../../router/logs/log_pipeline.ts";
import { parseQueryRange } from "../../router/logs/query_range_params.ts";
import { EntryCollector } from "../../router/logs/streams_result.ts";

/** One pushed entry. */
export interface PushedEntry {
  ns: bigint;
  labels: Record<string, string>;
  line: string;
}

/** A request the server saw. */
export interface SeenRequest {
  method: string;
  path: string;
  /** `X-Scope-OrgID`, or `undefined` when absent. */
  tenant: string | undefined;
  params: Record<string, string>;
  contentEncoding: string | undefined;
}

/** A running stand-in Loki. */
export interface LokiTestServer {
  url: string;
  requests: SeenRequest[];
  /** Entries pushed for `tenant` (default `fake`), in arrival order. */
  entries(tenant?: string): PushedEntry[];
  /** The next `query_range` answers `status` with `body` (plain text), like a failing Loki. */
  failNext(status: number, body: string): void;
  /** The next `query_range` waits `ms` before answering. */
  delayNext(ms: number): void;
  close(): Promise<void>;
}

/** Starts the server on a free loopback port. */
export function startLokiTestServer(): LokiTestServer {
  const store = new Map<string, PushedEntry[]>();
  const requests: SeenRequest[] = [];
  let failure: { status: number; body: string } | undefined;
  let delayMs = 0;
  const text = (status: number, body: string) =>
    new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const tenantHeader = req.headers.get("x-scope-orgid") ?? undefined;
    const tenant = tenantHeader ?? "fake";
    requests.push({
      method: req.method,
      path: url.pathname,
      tenant: tenantHeader,
      params: Object.fromEntries(url.searchParams),
      contentEncoding: req.headers.get("content-encoding") ?? undefined,
    });
    if (url.pathname === "/ready") return text(200, "ready");
    if (url.pathname === "/loki/api/v1/push" && req.method === "POST") {
      const type = req.headers.get("content-type") ?? "";
      if (!type.startsWith("application/json")) {
        return text(
          415,
          `this test Loki implements the JSON push only, got content-type "${type}"`,
        );
      }
      let body: unknown;
      try {
        let stream: ReadableStream<Uint8Array> = req.body ?? new Blob([]).stream();
        if (req.headers.get("content-encoding") === "gzip") {
          stream = stream.pipeThrough(
            new DecompressionStream("gzip") as TransformStream<Uint8Array, Uint8Array>,
          );
        }
        body = JSON.parse(await new Response(stream).text());
      } catch (error) {
        return text(400, `loghttp.PushRequest: cannot read the body: ${(error as Error).message}`);
      }
      const parsed = readPush(body);
      if (typeof parsed === "string") return text(400, parsed);
      const list = store.get(tenant) ?? [];
      list.push(...parsed);
      store.set(tenant, list);
      return new Response(null, { status: 204 });
    }
    if (url.pathname === "/loki/api/v1/query_range" && req.method === "GET") {
      if (delayMs > 0) {
        const wait = delayMs;
        delayMs = 0;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
      if (failure) {
        const { status, body } = failure;
        failure = undefined;
        return text(status, body);
      }
      try {
        const query = url.searchParams.get("query") ?? "";
        const compiled = compileQuery(parseLogQL(query));
        const range = parseQueryRange(url.searchParams, Date.now());
        const collector = new EntryCollector(range.limit, range.direction);
        for (const entry of store.get(tenant) ?? []) {
          if (entry.ns < range.startNs || entry.ns >= range.endNs) continue;
          if (!compiled.matchesStream(entry.labels)) continue;
          const out = compiled.process(entry.line, entry.labels);
          if (out) collector.add({ ns: entry.ns, ...out });
        }
        return Response.json(collector.response());
      } catch (error) {
        if (error instanceof LogQLError || error instanceof RangeError) {
          return text(400, `parse error: ${error.message}`);
        }
        throw error;
      }
    }
    return text(404, "404 page not found");
  });

  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    entries: (tenant = "fake") => [...(store.get(tenant) ?? [])],
    failNext: (status, body) => void (failure = { status, body }),
    delayNext: (ms) => void (delayMs = ms),
    close: async () => {
      await server.shutdown();
    },
  };
}

/** Validates a JSON push body; a string is the 400 message. */
function readPush(body: unknown): PushedEntry[] | string {
  const streams = (body as { streams?: unknown })?.streams;
  if (!Array.isArray(streams)) return 'push body: "streams" must be an array';
  const out: PushedEntry[] = [];
  for (const [i, item] of streams.entries()) {
    const { stream, values } = (item ?? {}) as { stream?: unknown; values?: unknown };
    if (typeof stream !== "object" || stream === null || Array.isArray(stream)) {
      return `push body: streams[${i}].stream must be an object of labels`;
    }
    const labels = stream as Record<string, unknown>;
    if (Object.keys(labels).length === 0) return `push body: streams[${i}].stream has no labels`;
    for (const [name, value] of Object.entries(labels)) {
      if (typeof value !== "string") {
        return `push body: streams[${i}].stream.${name} must be a string`;
      }
    }
    if (!Array.isArray(values)) return `push body: streams[${i}].values must be an array`;
    for (const [j, value] of values.entries()) {
      const [ns, line, metadata] = Array.isArray(value) ? value : [];
      if (typeof ns !== "string" || !/^\d+$/.test(ns) || typeof line !== "string") {
        return `push body: streams[${i}].values[${j}] must be ["<unix ns>", "<line>"]`;
      }
      if (metadata !== undefined && (typeof metadata !== "object" || metadata === null)) {
        return `push body: streams[${i}].values[${j}][2] must be an object (structured metadata)`;
      }
      out.push({ ns: BigInt(ns), labels: { ...labels } as Record<string, string>, line });
    }
  }
  return out;
}
