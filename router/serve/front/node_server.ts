/**
 * @module The router's HTTP front on `node:http` (`router.http_server: node`), for what
 * `Deno.serve` cannot do (issue 12):
 *
 * - **A connection cap** (`router.max_connections`): a connection beyond it gets a fixed
 *   `503` + `Retry-After` + `Connection: close` to its first request, never served, and is
 *   closed (over TLS it is closed without an answer: the handshake would cost what the cap
 *   saves). Router memory follows open connections.
 * - **A header timeout** (`router.header_timeout`): a connection that has not sent a whole
 *   request head within it after opening is closed; so is a keep-alive connection idle for
 *   `router.idle_timeout` after its last answer (node's own 5 s keep-alive timer is off).
 * - **Closing means closing**: an answer saying `Connection: close` (408 after
 *   `limits.body_timeout`, 413 mid-body) closes the socket after it is written.
 * - **An early answer keeps a prompt client's connection**: an answer sent before its
 *   request's body arrived whole (a 429 at admission) discards the rest of a body that
 *   declares at most {@linkcode DRAIN_LIMIT_BYTES}, so a client whose body follows at once
 *   keeps its connection (closing it would make every shed request cost a new connection:
 *   under overload that churn took the CPU). A body that is not whole within the header
 *   timeout after the answer, or larger, or of unknown length, closes the socket — a slow
 *   client cannot keep it by never finishing its body.
 *
 * The handler sees what `Deno.serve` gives it: a web `Request` and an info object with
 * `remoteAddr` (per-client limits use it). Answers stream as they are produced.
 * {@linkcode NodeFront.shutdown} stops accepting, closes idle connections and closes busy
 * ones after their answer.
 */
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  acceptConnections,
  createConnections,
  type FrontConnections,
  type FrontCounts,
  startSweep,
} from "./node_connections.ts";
import { toRequest } from "./node_request.ts";
import { writeResponse } from "./node_response.ts";

/** `Retry-After` of the answer to a connection beyond the cap (as admission's 429). */
const REFUSED_RETRY_AFTER_S = 1;

/** The whole answer to a connection beyond `router.max_connections`, to its first request. */
const CONNECTIONS_FULL = (() => {
  const body = JSON.stringify({
    error: "Cannot accept the connection: router.max_connections connections are open; retry later",
    code: "service_unavailable",
  });
  return "HTTP/1.1 503 Service Unavailable\r\n" +
    `Retry-After: ${REFUSED_RETRY_AFTER_S}\r\n` +
    "Connection: close\r\n" +
    "Content-Type: application/json\r\n" +
    `Content-Length: ${new TextEncoder().encode(body).byteLength}\r\n\r\n` + body;
})();

/**
 * Bodies up to this many bytes are discarded after an early answer to keep the connection
 * (assumed: a demo inference body is a few KiB; a larger one costs less to close than to read).
 */
const DRAIN_LIMIT_BYTES = 1024 * 1024;

export type { FrontCounts } from "./node_connections.ts";

/** What the handler gets besides the request, as from `Deno.serve`. */
export interface FrontInfo {
  remoteAddr: { transport: "tcp"; hostname: string; port: number };
}

/** Options of {@linkcode serveNode}. */
export interface NodeFrontOptions {
  hostname: string;
  port: number;
  /** PEM cert and key: HTTPS. */
  tls?: { cert: string; key: string } | undefined;
  maxConnections: number;
  /** A connection's first request head must be whole within this of its opening. */
  headerTimeoutMs: number;
  /** A keep-alive connection with no request for this long after its last answer is closed. */
  idleTimeoutMs: number;
  /** The answer when the handler throws. */
  onError(error: unknown): Response;
}

/** A listening front. */
export interface NodeFront {
  addr: { hostname: string; port: number };
  /** Settles when the server has stopped and every connection is closed. */
  finished: Promise<void>;
  counts(): FrontCounts;
  /** Stops accepting; closes idle connections now and busy ones after their answer. */
  shutdown(): Promise<void>;
}

/**
 * Starts discarding the unread rest of `req`'s body if it declares at most
 * {@linkcode DRAIN_LIMIT_BYTES} and nobody is reading it; false when the connection must
 * close instead (no length, too long, or a reader holds the body).
 */
function discardRest(req: IncomingMessage, request: Request | undefined): boolean {
  const length = Number(req.headers["content-length"]);
  if (!(length <= DRAIN_LIMIT_BYTES) || request?.body?.locked) return false;
  // Cancelling the request's stream detaches it from `req`; flowing with no reader drops bytes.
  const body = request?.body;
  if (body) void body.cancel().catch(() => {}).finally(() => req.resume());
  else req.resume();
  return true;
}

/** Serves `handler` on `node:http(s)`; resolves once listening. */
export async function serveNode(
  options: NodeFrontOptions,
  handler: (request: Request, info: FrontInfo) => Response | Promise<Response>,
): Promise<NodeFront> {
  const server = options.tls
    ? https.createServer({ cert: options.tls.cert, key: options.tls.key })
    : http.createServer();
  const connections = createConnections();
  // Idle keep-alive connections are this module's to close (counted), not node's 5 s timer.
  server.keepAliveTimeout = 0;
  const sweep = startSweep(connections, options);
  acceptConnections(server, connections, { ...options, tls: options.tls !== undefined });
  serveRequests(server, connections, options, handler);
  await listen(server, options, sweep);
  const address = server.address() as AddressInfo;
  const finished = new Promise<void>((resolve) =>
    server.once("close", () => {
      clearInterval(sweep);
      resolve();
    })
  );
  const { open, counts } = connections;
  return {
    addr: { hostname: address.address, port: address.port },
    finished,
    counts: () => ({ open: open.size, ...counts }),
    shutdown() {
      if (!connections.closing) {
        connections.closing = true;
        server.close();
        for (const [socket, conn] of open) if (conn.busy === 0) socket.destroy();
      }
      return finished;
    },
  };
}

/**
 * Answers each request with `handler` (a refused connection's with the fixed 503), then
 * keeps, drains or closes its connection.
 */
function serveRequests(
  server: http.Server | https.Server,
  connections: FrontConnections,
  options: NodeFrontOptions,
  handler: (request: Request, info: FrontInfo) => Response | Promise<Response>,
): void {
  const { open, counts, refused } = connections;
  const scheme = options.tls ? "https" : "http";
  const fallbackHost = `${options.hostname}:${options.port}`;
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    if (refused.has(socket)) {
      socket.end(CONNECTIONS_FULL);
      return;
    }
    const conn = open.get(socket);
    if (conn) {
      conn.busy++;
      conn.draining = undefined;
    }
    const done = (closeAfter: boolean, draining: boolean) => {
      if (conn) {
        conn.busy--;
        conn.answered++;
        if (draining) conn.draining = req;
      }
      if (closeAfter || connections.closing) socket.destroy();
      else if (conn && conn.busy === 0) conn.waitingSince = performance.now();
    };
    void (async () => {
      // The parser finishes the read that held the head first: a small body is whole then.
      await undefined;
      let response: Response;
      let request: Request | undefined;
      try {
        request = toRequest(req, scheme, fallbackHost);
        response = await handler(request, {
          remoteAddr: {
            transport: "tcp",
            hostname: socket.remoteAddress ?? "",
            port: socket.remotePort ?? 0,
          },
        });
      } catch (error) {
        response = options.onError(error);
      }
      let close = connections.closing || response.headers.get("connection") === "close";
      // The body is not whole: discard the rest to keep the connection, or close it.
      const unread = !req.complete;
      const draining = unread && !close && discardRest(req, request);
      if (unread && !draining) close = true;
      await writeResponse(res, response, { close, head: req.method === "HEAD" });
      if (draining) counts.drained++;
      else if (unread) counts.closedUnread++;
      if (res.writableFinished) done(close, draining);
      else res.once("finish", () => done(close, draining));
    })().catch(() => socket.destroy());
  });
}

/** Listens on `options`' address; a taken port rejects as `Deno.errors.AddrInUse`. */
function listen(
  server: http.Server | https.Server,
  options: NodeFrontOptions,
  sweep: ReturnType<typeof setInterval>,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", (error: Error & { code?: string }) => {
      clearInterval(sweep);
      // As `Deno.serve` throws it, so callers tell a taken port from other failures.
      reject(error.code === "EADDRINUSE" ? new Deno.errors.AddrInUse(error.message) : error);
    });
    server.listen(options.port, options.hostname, () => {
      server.removeAllListeners("error");
      resolve();
    });
  });
}
