/**
 * @module `GET /api/stream`: Server-Sent Events pushing a dashboard snapshot every
 * interval to each connected page.
 *
 * Design: ticks start with the first client (periodic, non-overlapping rounds) and
 * build nothing while none is connected. A tick builds one shared base and writes `event: snapshot` to every client,
 * with that client's layer timeline spliced in (computed once per distinct layer). A new
 * client gets the latest base at once (or a fresh one when there is none yet), so a page
 * never waits a whole interval. Bounds: at most `maxClients` streams (beyond → 503 with
 * `Retry-After`) and `maxPerClient` from one client address (beyond → 429), so one client
 * cannot take every stream; a client that stops reading (`maxQueued` unread events) is dropped, so a
 * stalled page never grows the router's memory. A disconnect (the server cancels the response
 * stream) removes the client; `close()` ends every stream so the server can shut down.
 */
import { ApiError } from "../../../shared/errors.ts";
import type { Logger } from "../../../shared/logger.ts";
import { PeriodicRounds } from "../../runtime/periodic_rounds.ts";
import {
  buildSnapshotBase,
  type SnapshotBase,
  snapshotJson,
  type SnapshotSources,
  type TimelineSelection,
} from "./dashboard_snapshot.ts";

/** Options of {@linkcode SnapshotStream}. */
export interface SnapshotStreamOptions {
  sources: SnapshotSources;
  logger: Logger;
  /** Time between snapshots (ms); default 1000. */
  intervalMs?: number;
  /** Concurrent streams (`limits.sse_streams`); default 32. */
  maxClients?: number;
  /** Concurrent streams from one client address (`limits.sse_streams_per_client`); default 4. */
  maxPerClient?: number;
  /** Unread events after which a client is dropped; default 8. */
  maxQueued?: number;
}

interface Client {
  controller: ReadableStreamDefaultController<Uint8Array>;
  selection: TimelineSelection;
  /** Who opened it (the remote address), for the per-client bound. */
  owner: string;
}

const encoder = new TextEncoder();

/** The SSE hub; see the module doc. */
export class SnapshotStream {
  readonly intervalMs: number;
  readonly maxClients: number;
  readonly maxPerClient: number;
  readonly #perOwner = new Map<string, number>();
  readonly #options: SnapshotStreamOptions;
  readonly #maxQueued: number;
  readonly #clients = new Set<Client>();
  readonly #releases = new Map<Client, () => void>();
  readonly #rounds: PeriodicRounds;
  #latest: SnapshotBase | undefined;
  #seq = 0;
  #closed = false;
  #ticking = false;

  constructor(options: SnapshotStreamOptions) {
    this.#options = options;
    this.intervalMs = options.intervalMs ?? 1000;
    this.maxClients = options.maxClients ?? 32;
    this.maxPerClient = options.maxPerClient ?? 4;
    this.#maxQueued = options.maxQueued ?? 8;
    this.#rounds = new PeriodicRounds(options.sources.clock, this.intervalMs, () => this.#tick());
  }

  /** Connected clients now. */
  get clients(): number {
    return this.#clients.size;
  }

  /** A fresh snapshot for one selection (the page's first paint, tests). */
  async snapshot(selection: TimelineSelection): Promise<string> {
    const base = await this.#build();
    return snapshotJson(
      base,
      this.#options.sources.timeline,
      selection,
      this.#options.sources.window,
    );
  }

  /**
   * Opens a stream for one page of `owner` (its remote address); throws 429 when that
   * owner has `maxPerClient` open, 503 when `maxClients` are connected.
   */
  connect(selection: TimelineSelection, owner = "local"): Response {
    if (this.#closed) {
      throw new ApiError("overloaded", "Cannot open stream: the router is shutting down", {
        retryAfterS: 5,
      });
    }
    if ((this.#perOwner.get(owner) ?? 0) >= this.maxPerClient) {
      throw new ApiError(
        "too_many_requests",
        `Cannot open stream: ${this.maxPerClient} dashboard streams from this client are open (limits.sse_streams_per_client)`,
        { retryAfterS: 5 },
      );
    }
    if (this.#clients.size >= this.maxClients) {
      throw new ApiError(
        "overloaded",
        `Cannot open stream: ${this.maxClients} dashboard streams are open (limits.sse_streams)`,
        { retryAfterS: 5 },
      );
    }
    // Counted now, not when the body starts, so a burst cannot overshoot the bounds.
    this.#perOwner.set(owner, (this.#perOwner.get(owner) ?? 0) + 1);
    let counted = true;
    const release = () => {
      if (!counted) return;
      counted = false;
      const left = (this.#perOwner.get(owner) ?? 1) - 1;
      if (left > 0) this.#perOwner.set(owner, left);
      else this.#perOwner.delete(owner);
    };
    let client: Client | undefined;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        client = { controller, selection, owner };
        this.#releases.set(client, release);
        this.#clients.add(client);
        // Tell EventSource how long to wait before reconnecting.
        controller.enqueue(encoder.encode(`retry: ${this.intervalMs * 2}\n\n`));
        if (!this.#ticking) {
          // The first tick runs at once and reaches this client too; ticks run until close().
          this.#ticking = true;
          void this.#rounds.start();
        } else if (this.#latest !== undefined) {
          this.#send(client, this.#latest, new Map());
        }
      },
      cancel: () => this.#remove(client),
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache, no-store",
        "x-accel-buffering": "no",
      },
    });
  }

  /** Ends every stream and stops ticking (idempotent). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const client of [...this.#clients]) {
      this.#remove(client);
      try {
        client.controller.close();
      } catch { /* already closed */ }
    }
    await this.#rounds.stop();
  }

  async #build(): Promise<SnapshotBase> {
    const base = await buildSnapshotBase(this.#options.sources, ++this.#seq);
    if (this.#latest === undefined || base.seq > this.#latest.seq) this.#latest = base;
    return base;
  }

  async #tick(): Promise<void> {
    // Nobody watches: an idle timer, nothing built.
    if (this.#clients.size === 0) return;
    let base: SnapshotBase;
    try {
      base = await this.#build();
    } catch (error) {
      this.#options.logger.warn("dashboard snapshot failed", { error: (error as Error).message });
      return;
    }
    const perSelection = new Map<string, string>();
    for (const client of [...this.#clients]) this.#send(client, base, perSelection);
  }

  #send(client: Client, base: SnapshotBase, cache: Map<string, string>): void {
    const { model, layer, windowMs } = client.selection;
    const key = `${model ?? ""}\u0000${layer ?? ""}\u0000${windowMs ?? ""}`;
    let json = cache.get(key);
    if (json === undefined) {
      const { timeline, window } = this.#options.sources;
      cache.set(key, json = snapshotJson(base, timeline, client.selection, window));
    }
    const desired = client.controller.desiredSize;
    if (desired !== null && desired <= -this.#maxQueued) {
      this.#options.logger.warn("dashboard stream dropped: client not reading", {
        queued: -desired,
      });
      this.#remove(client);
      try {
        client.controller.close();
      } catch { /* already closed */ }
      return;
    }
    try {
      client.controller.enqueue(
        encoder.encode(`event: snapshot\nid: ${base.seq}\ndata: ${json}\n\n`),
      );
    } catch {
      this.#remove(client);
    }
  }

  #remove(client: Client | undefined): void {
    if (client === undefined) return;
    this.#clients.delete(client);
    this.#releases.get(client)?.();
    this.#releases.delete(client);
  }
}
