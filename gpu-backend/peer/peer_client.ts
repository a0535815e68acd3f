/**
 * @module The sending side of the expert channel to one peer backend.
 *
 * Rows for that peer's experts are queued and flushed once per microtask checkpoint, so
 * everything the entry backend issues in one go — all experts of a layer, for every
 * request whose gate finished at the same time — travels in one frame (one per frame
 * kind: per-expert `run` items, per-layer `layer` items) over one persistent WebSocket
 * with `TCP_NODELAY` (`nodelay_websocket.ts`; Deno's own client stalled every frame over
 * ~1 KB for ~40 ms). A dropped connection fails the rows in flight with
 * {@linkcode PeerUnavailableError} (the dispatcher re-sends them to another replica)
 * and marks the peer unavailable for `reconnectDelayMs` before the next attempt — doubled
 * after each failure in a row up to `maxReconnectDelayMs` (a hung peer accepts TCP but
 * never welcomes; each attempt would hold rows for the connect timeout), reset by the
 * first answer. So does
 * a frame left unanswered for `answerTimeoutMs`: a hung peer (SIGSTOP, a stuck event
 * loop) keeps its TCP connection open, and without this its rows would wait forever.
 */
import type { Logger } from "../../shared/logger.ts";
import {
  decodePeerFrame,
  encodePeerFrame,
  packLayerItems,
  type PeerItem,
  type PeerLayerData,
} from "./peer_protocol.ts";
import { NoDelayWebSocket, type PeerSocket } from "./nodelay_websocket.ts";

/** The peer cannot be reached (connection refused, closed, or handshake failed). */
export class PeerUnavailableError extends Error {
  constructor(readonly peer: string, reason: string) {
    super(`peer ${peer} unavailable: ${reason}`);
    this.name = "PeerUnavailableError";
  }
}

/** The peer answered but could not run the rows (its message and error code). */
export class PeerRunError extends Error {
  constructor(readonly peer: string, message: string, readonly code: string) {
    super(`peer ${peer}: ${message}`);
    this.name = "PeerRunError";
  }
}

/** A peer's answer to one layer item: per row `Σ weight · expert(row)`, and its serving time. */
export interface PeerAnswer {
  /** `[rows, d]` */
  values: Float32Array;
  /** Ms the peer spent on the frame that carried the item (0 when it did not say). */
  serveMs: number;
}

/** Options of {@linkcode PeerClient}. */
export interface PeerClientOptions {
  peerId: string;
  /** The peer's base URL (`http://host:port`). */
  url: string;
  selfId: string;
  token: string | undefined;
  logger: Logger;
  reconnectDelayMs?: number;
  /** Cap of the doubled reconnect delay; default 8 s. */
  maxReconnectDelayMs?: number;
  connectTimeoutMs?: number;
  /** A frame unanswered this long drops the connection (rows re-sent elsewhere); default 3 s. */
  answerTimeoutMs?: number;
  now?: () => number;
  /** Counts frame bytes sent and received (node resources); optional. */
  net?: { received(bytes: number): void; sent(bytes: number): void };
  /** Opens the channel's socket; default a {@linkcode NoDelayWebSocket} (no Nagle stall). */
  openSocket?: (url: string) => PeerSocket;
}

type Entry =
  & {
    /** Rows the answer holds for this entry. */
    rows: number;
    resolve: (answer: PeerAnswer) => void;
    reject: (error: Error) => void;
  }
  & ({ kind: "run"; item: PeerItem; input: Float32Array } | { kind: "layer"; data: PeerLayerData });

/** Client side of the channel to one peer. */
export class PeerClient {
  readonly peerId: string;
  readonly #options: PeerClientOptions;
  readonly #now: () => number;
  #socket: PeerSocket | null = null;
  #ready: Promise<PeerSocket> | null = null;
  #outbox: Entry[] = [];
  #flushScheduled = false;
  #pending = new Map<number, Entry[]>();
  #answerTimers = new Map<number, ReturnType<typeof setTimeout>>();
  #nextId = 1;
  #downUntil = 0;
  /** Failures since the last answer (the reconnect delay doubles with each). */
  #failures = 0;
  /** The socket of the connection attempt in progress, if any. */
  #connecting: PeerSocket | null = null;
  #closed = false;
  /**
   * Frames and rows sent, for load accounting and tests, and the host-thread ms spent
   * packing them and reading their answers (`cpuMs`: this side's cost of the hop).
   */
  readonly sent = { frames: 0, items: 0, rows: 0, cpuMs: 0 };

  constructor(options: PeerClientOptions) {
    this.peerId = options.peerId;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** False while the peer is considered down (after a failure, until the retry delay). */
  get available(): boolean {
    return !this.#closed && this.#now() >= this.#downUntil;
  }

  /** Sends `rows` rows for (layer, expert) and resolves the peer's output rows. */
  run(layer: number, expert: number, input: Float32Array, rows: number): Promise<Float32Array> {
    if (!this.available) {
      return Promise.reject(new PeerUnavailableError(this.peerId, "marked down, retrying later"));
    }
    return this.#enqueue<Float32Array>((resolve, reject) => ({
      kind: "run",
      item: { layer, expert, rows },
      input,
      rows,
      resolve: (answer) => resolve(answer.values),
      reject,
    }));
  }

  /**
   * Sends one layer item — unique rows and their assignments — and resolves each row's
   * `Σ weight · expert(row)` over its assignments (`[data.rows, d]`).
   */
  runLayer(data: PeerLayerData): Promise<PeerAnswer> {
    if (!this.available) {
      return Promise.reject(new PeerUnavailableError(this.peerId, "marked down, retrying later"));
    }
    return this.#enqueue<PeerAnswer>((resolve, reject) => ({
      kind: "layer",
      data,
      rows: data.rows,
      resolve,
      reject,
    }));
  }

  #enqueue<T>(
    entry: (resolve: (value: T) => void, reject: (error: Error) => void) => Entry,
  ): Promise<T> {
    return new Promise((resolve, reject) => {
      this.#outbox.push(entry(resolve, reject));
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        queueMicrotask(() => void this.#flush());
      }
    });
  }

  /** Closes the connection; pending rows fail. */
  close(): void {
    this.#closed = true;
    this.#fail("client closed");
    this.#socket?.close();
  }

  async #flush(): Promise<void> {
    this.#flushScheduled = false;
    const entries = this.#outbox;
    this.#outbox = [];
    if (entries.length === 0) return;
    let socket: PeerSocket;
    try {
      socket = await this.#connect();
    } catch (error) {
      const failure = new PeerUnavailableError(this.peerId, (error as Error).message);
      for (const entry of entries) entry.reject(failure);
      return;
    }
    const startedAt = performance.now();
    const runs = entries.filter((e) => e.kind === "run");
    const layers = entries.filter((e) => e.kind === "layer");
    if (runs.length > 0) {
      const totalRows = runs.reduce((sum, e) => sum + e.rows, 0);
      const payload = new Float32Array(runs.reduce((sum, e) => sum + e.input.length, 0));
      let offset = 0;
      for (const entry of runs) {
        payload.set(entry.input, offset);
        offset += entry.input.length;
      }
      const id = this.#nextId++;
      this.#send(
        socket,
        id,
        runs,
        totalRows,
        { t: "run", id, items: runs.map((e) => e.item) },
        payload,
      );
    }
    if (layers.length > 0) {
      const id = this.#nextId++;
      const header = {
        t: "layer" as const,
        id,
        items: layers.map(({ data }) => ({
          layer: data.layer,
          rows: data.rows,
          assigned: data.assignRow.length,
        })),
      };
      const totalRows = layers.reduce((sum, e) => sum + e.rows, 0);
      this.#send(socket, id, layers, totalRows, header, packLayerItems(layers.map((e) => e.data)));
    }
    this.sent.cpuMs += performance.now() - startedAt;
  }

  #send(
    socket: PeerSocket,
    id: number,
    entries: Entry[],
    rows: number,
    header: Parameters<typeof encodePeerFrame>[0],
    payload: Float32Array,
  ): void {
    this.#pending.set(id, entries);
    const waitMs = this.#options.answerTimeoutMs ?? 3000;
    this.#answerTimers.set(
      id,
      setTimeout(() => {
        this.#answerTimers.delete(id);
        if (!this.#pending.has(id) || this.#socket !== socket) return;
        this.#down(`no answer within ${waitMs} ms`);
        socket.close();
      }, waitMs),
    );
    this.sent.frames++;
    this.sent.items += entries.length;
    this.sent.rows += rows;
    const frame = encodePeerFrame(header, payload);
    this.#options.net?.sent(frame.byteLength);
    socket.send(frame);
  }

  #connect(): Promise<PeerSocket> {
    if (this.#ready) return this.#ready;
    const url = `${this.#options.url.replace(/^http/, "ws")}/v2/peer`;
    this.#ready = new Promise<PeerSocket>((resolve, reject) => {
      const socket = this.#options.openSocket?.(url) ?? new NoDelayWebSocket(url);
      this.#connecting = socket;
      const timer = setTimeout(() => {
        const reason = `no welcome within ${this.#options.connectTimeoutMs ?? 2000} ms`;
        // Marked down now: the close of a socket whose peer hangs may never come.
        if (this.#connecting === socket) this.#down(reason);
        reject(new Error(reason));
        socket.close();
      }, this.#options.connectTimeoutMs ?? 2000);
      socket.onopen = () => {
        const hello = encodePeerFrame({
          t: "hello",
          from: this.#options.selfId,
          token: this.#options.token ?? null,
        });
        this.#options.net?.sent(hello.byteLength);
        socket.send(hello);
      };
      socket.onmessage = (event) => {
        const receivedAt = performance.now();
        this.#options.net?.received(event.data.byteLength);
        const frame = decodePeerFrame(event.data);
        if (frame.header.t === "welcome") {
          clearTimeout(timer);
          this.#socket = socket;
          if (this.#connecting === socket) this.#connecting = null;
          resolve(socket);
          return;
        }
        if (frame.header.t === "result") {
          this.#settle(frame.header, frame.payload);
          this.sent.cpuMs += performance.now() - receivedAt;
        }
      };
      socket.onerror = () => {};
      socket.onclose = (event) => {
        clearTimeout(timer);
        const reason = event.reason || `connection closed (code ${event.code})`;
        reject(new Error(reason));
        // Only the live connection or the attempt in progress: a socket already given up
        // (its peer stopped answering) must not mark down a newer attempt.
        if (this.#socket === socket || this.#connecting === socket) this.#down(reason);
      };
    });
    // A failed connection must not stay cached.
    this.#ready.catch(() => {});
    return this.#ready;
  }

  #settle(
    header: Extract<ReturnType<typeof decodePeerFrame>["header"], { t: "result" }>,
    payload: Float32Array,
  ): void {
    const entries = this.#pending.get(header.id);
    if (!entries) return;
    this.#pending.delete(header.id);
    this.#failures = 0;
    clearTimeout(this.#answerTimers.get(header.id));
    this.#answerTimers.delete(header.id);
    if (!header.ok) {
      const error = new PeerRunError(this.peerId, header.error, header.code);
      for (const entry of entries) entry.reject(error);
      return;
    }
    const totalRows = entries.reduce((sum, e) => sum + e.rows, 0);
    const width = totalRows > 0 ? payload.length / totalRows : 0;
    const serveMs = header.serveMs ?? 0;
    let offset = 0;
    for (const entry of entries) {
      const size = entry.rows * width;
      entry.resolve({ values: payload.subarray(offset, offset + size), serveMs });
      offset += size;
    }
  }

  #down(reason: string): void {
    this.#socket = null;
    this.#connecting = null;
    this.#ready = null;
    const base = this.#options.reconnectDelayMs ?? 500;
    const delay = Math.min(base * 2 ** this.#failures, this.#options.maxReconnectDelayMs ?? 8000);
    this.#failures = Math.min(this.#failures + 1, 30);
    this.#downUntil = this.#now() + delay;
    this.#options.logger.warn("peer unavailable", { peer: this.peerId, reason });
    this.#fail(reason);
  }

  #fail(reason: string): void {
    const failure = new PeerUnavailableError(this.peerId, reason);
    for (const entries of this.#pending.values()) {
      for (const entry of entries) entry.reject(failure);
    }
    this.#pending.clear();
    for (const timer of this.#answerTimers.values()) clearTimeout(timer);
    this.#answerTimers.clear();
    for (const entry of this.#outbox.splice(0)) entry.reject(failure);
  }
}
