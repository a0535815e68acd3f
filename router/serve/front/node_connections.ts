/**
 * @module The node front's connections (`node_server.ts`): the cap on open connections
 * (a refused plain-HTTP connection is answered once its head arrives, a refused TLS one
 * closed at once), the handshake and header timeouts, and the sweep that closes
 * connections waiting too long for a request head or idle too long after an answer.
 */
import type { IncomingMessage } from "node:http";
import type { Server, Socket } from "node:net";

/**
 * A refused connection is destroyed this long after it opened, if the client keeps it (or
 * has sent no request head to answer by then).
 */
const REFUSED_LINGER_MS = 2_000;

/** Counts of the front's own decisions, for metrics. */
export interface FrontCounts {
  /** Connections open now. */
  open: number;
  /** Connections closed at once because `max_connections` were open. */
  refused: number;
  /** Connections closed for sending no whole first request head within the header timeout. */
  headerTimeouts: number;
  /** Keep-alive connections closed for sending no next request within the idle timeout. */
  idleTimeouts: number;
  /** Connections closed after an answer sent before the request's body was whole. */
  closedUnread: number;
  /** Bodies discarded after an early answer, their connection kept. */
  drained: number;
}

/** One open connection as the front tracks it. */
export interface Connection {
  /** Requests received and not yet answered (more than one when pipelined). */
  busy: number;
  /** Requests answered on it (0: still waiting for its first head). */
  answered: number;
  /** When it started waiting for a request head (`performance.now()`). */
  waitingSince: number;
  /** A request answered early whose discarded body has not arrived whole yet. */
  draining: IncomingMessage | undefined;
}

/** How often idle connections are checked against the header timeout, at most. */
const SWEEP_MS = 1000;

/** What the front's parts share: the open connections, the counts, whether it is closing. */
export interface FrontConnections {
  open: Map<Socket, Connection>;
  counts: Omit<FrontCounts, "open">;
  /** Refused plain-HTTP connections: their request (if the parser gets to it) is not served. */
  refused: WeakSet<Socket>;
  /** Set by shutdown: no connection is admitted and every answer closes its connection. */
  closing: boolean;
}

/** No connections yet, all counts 0. */
export function createConnections(): FrontConnections {
  return {
    open: new Map(),
    counts: { refused: 0, headerTimeouts: 0, idleTimeouts: 0, closedUnread: 0, drained: 0 },
    refused: new WeakSet(),
    closing: false,
  };
}

/**
 * One sweep for every connection instead of a timer per request: a connection waiting
 * for a head is closed between the timeout and the timeout plus one sweep interval.
 */
export function startSweep(
  connections: FrontConnections,
  timeouts: { headerTimeoutMs: number; idleTimeoutMs: number },
): ReturnType<typeof setInterval> {
  const { open, counts } = connections;
  const timeoutMs = timeouts.headerTimeoutMs;
  const idleMs = timeouts.idleTimeoutMs;
  return setInterval(() => {
    const now = performance.now();
    for (const [socket, conn] of open) {
      if (conn.busy > 0) continue;
      const draining = conn.draining !== undefined && !conn.draining.complete;
      const limit = conn.answered === 0 || draining ? timeoutMs : idleMs;
      if (now - conn.waitingSince < limit) continue;
      if (conn.answered === 0) counts.headerTimeouts++;
      else if (draining) counts.closedUnread++;
      else counts.idleTimeouts++;
      open.delete(socket);
      socket.destroy();
    }
  }, Math.max(10, Math.min(SWEEP_MS, timeoutMs / 4, idleMs / 4)));
}

/** Admits `server`'s connections up to `maxConnections`; see the module doc. */
export function acceptConnections(
  server: Server,
  connections: FrontConnections,
  options: { tls: boolean; maxConnections: number; headerTimeoutMs: number },
): void {
  const { open, counts, refused } = connections;
  const full = () => open.size >= options.maxConnections || connections.closing;
  const admit = (socket: Socket) => {
    if (full()) {
      counts.refused++;
      if (options.tls) {
        socket.destroy();
        return;
      }
      // Answered once its request head arrives: an HTTP client reads an answer that comes
      // before its request as a broken connection, not as the 503.
      refused.add(socket);
      socket.on("error", () => socket.destroy());
      setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref?.();
      return;
    }
    open.set(socket, {
      busy: 0,
      answered: 0,
      waitingSince: performance.now(),
      draining: undefined,
    });
    socket.on("close", () => open.delete(socket));
  };
  if (!options.tls) {
    server.on("connection", admit);
    return;
  }
  // Requests arrive on the TLS socket `secureConnection` hands over; until then the raw
  // connection is capped here and its handshake bounded by the header timeout.
  const secured = new WeakSet<Socket>();
  let canTellSecured = true;
  server.on("connection", (raw: Socket) => {
    if (full()) {
      counts.refused++;
      raw.destroy();
      return;
    }
    const timer = setTimeout(() => {
      if (!canTellSecured || secured.has(raw)) return;
      counts.headerTimeouts++;
      raw.destroy();
    }, options.headerTimeoutMs);
    raw.on("close", () => clearTimeout(timer));
  });
  server.on("secureConnection", (socket: Socket) => {
    const raw = (socket as Socket & { _parent?: Socket })._parent;
    // Without a way to match the raw socket, no handshake is timed out (never a live one).
    if (raw === undefined) canTellSecured = false;
    else secured.add(raw);
    admit(socket);
  });
}
