/**
 * @module A stand-in for Grafana Loki in tests. No Loki server can be installed on these
 * machines (it is neither in Debian nor on npm), so this small `Deno.serve` server
 * implements the parts of Loki's documented HTTP API that Switchyard uses:
 *
 * - `POST /loki/api/v1/push`: the JSON form (`{"streams":[{"stream":{…labels},
 *   "values":[["<unix ns>","<line>"(, {structured metadata})]]}]}`), plain or with
 *   `Content-Encoding: gzip`; answers 204. Protobuf pushes get 415 (not implemented).
 * - `GET /loki/api/v1/query_range`: answered from hand-written golden answers
 *   (`loki_golden.ts`, Loki's semantics worked out by hand for a fixed corpus), never by
 *   Switchyard's own LogQL code: a request whose parameters match no golden answer
 *   exactly gets 400 naming them. A test may pass its own `answer` function for
 *   queries over lines it pushed (also written by hand, for that one query).
 * - `GET /ready`: `ready`.
 *
 * Tenants are kept apart by `X-Scope-OrgID` (absent → `fake`, Loki's single-tenant
 * name). Every request is recorded in `requests`, and `failNext` / `delayNext` inject a
 * Loki error or a slow answer, for the error paths.
 */
import { findGolden, type GoldenAnswer, LOKI_GOLDEN } from "./loki_golden.ts";

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

/** A test's own answer for a query: `undefined` falls back to the golden answers. */
export type AnswerFn = (
  params: Record<string, string>,
  entries: PushedEntry[],
) => GoldenAnswer["body"] | undefined;

/** Options of {@linkcode startLokiTestServer}. */
export interface LokiTestServerOptions {
  /** Default {@linkcode LOKI_GOLDEN}. */
  golden?: GoldenAnswer[];
  answer?: AnswerFn;
}

/** Starts the server on a free loopback port. */
export function startLokiTestServer(options: LokiTestServerOptions = {}): LokiTestServer {
  const golden = options.golden ?? LOKI_GOLDEN;
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
      const params = Object.fromEntries(url.searchParams);
      const own = options.answer?.(params, [...(store.get(tenant) ?? [])]);
      if (own !== undefined) return Response.json(own);
      const answer = findGolden(golden, params);
      if (answer === undefined) {
        return text(400, `this test Loki has no golden answer for ${JSON.stringify(params)}`);
      }
      return answer.status === 200 ? Response.json(answer.body) : text(400, String(answer.body));
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
