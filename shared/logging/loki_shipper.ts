/**
 * @module Ships log lines to Grafana Loki in batches, in the background.
 *
 * Design: `push()` only appends to a bounded buffer — it never waits, never throws and
 * never does I/O, so logging cannot block or fail a request. Every `batchIntervalMs` a
 * tick sends the buffer in pushes of at most `maxBatchLines`, one push in flight at a
 * time, each with a `timeoutMs` deadline. Lines leave the buffer only when Loki accepted
 * them (2xx). A push that fails with a network error, a timeout, 429 or 5xx is retried
 * with exponential backoff (`initialBackoffMs` doubling up to `maxBackoffMs`; ticks during
 * the backoff do nothing); a 4xx other than 429 means Loki will never take that batch,
 * so it is dropped and counted instead of retried forever. While Loki is down the buffer
 * holds at most `maxBufferLines` lines, dropping the oldest and counting them — memory
 * stays bounded, and once Loki is back the rest is shipped.
 *
 * Why not pino-loki (3.0.0): its batch is removed from the buffer before the push and a
 * failed push is only printed (`console.error`), so there is no retry or backoff and
 * nothing survives an outage; lines dropped from its full buffer are neither counted nor
 * observable; and it runs as a pino transport stream, so counts could not be read back
 * for the `switchyard_log_lines_dropped_total` metric.
 */
import { type LokiEntry, lokiPushBody } from "./loki_push.ts";

/** Options of {@linkcode LokiShipper}. */
export interface LokiShipperOptions {
  /** Loki base URL; lines go to `<url>/loki/api/v1/push`. */
  url: string;
  /** Sent as `X-Scope-OrgID` when set. */
  tenant?: string;
  /** Time between pushes (`loki.batch_interval`). */
  batchIntervalMs: number;
  /** Lines held at most (`loki.max_buffer_lines`); the oldest are dropped beyond it. */
  maxBufferLines: number;
  /** Deadline of one push (`loki.timeout`). */
  timeoutMs: number;
  /** Lines per push; default 1000. */
  maxBatchLines?: number;
  /** First retry delay; default 500 ms. */
  initialBackoffMs?: number;
  /** Longest retry delay; default 30 s. */
  maxBackoffMs?: number;
  /** Default: the global `fetch`. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Clock in ms; default `Date.now`. */
  now?: () => number;
  /** Told about push failures, once per failure streak; default: ignored. */
  onError?: (message: string) => void;
  /** Start the interval timer; default true (tests drive `tick()` by hand). */
  autoStart?: boolean;
}

/** Counters of a {@linkcode LokiShipper}. */
export interface LokiShipperStats {
  /** Lines Loki accepted. */
  shipped: number;
  /** Lines lost: buffer overflow, batches Loki refused, lines pushed after close. */
  dropped: number;
  /** Lines waiting (including a push in flight). */
  buffered: number;
  /** Push attempts that failed. */
  failedPushes: number;
}

/** A push that did not go through: retry it later, or never. */
class PushFailure extends Error {
  constructor(message: string, readonly retry: boolean) {
    super(message);
  }
}

/** Batches, retries and bounds the lines it ships to Loki. */
export class LokiShipper {
  readonly #options: LokiShipperOptions;
  readonly #endpoint: string;
  readonly #fetch: (input: string, init: RequestInit) => Promise<Response>;
  readonly #now: () => number;
  /** Buffered entries from index `#head` on (a queue without O(n) shifts). */
  #items: (LokiEntry | undefined)[] = [];
  #head = 0;
  #inFlight: Promise<void> | undefined;
  #inFlightLines = 0;
  #interval: ReturnType<typeof setInterval> | undefined;
  #failures = 0;
  #retryAt = 0;
  #closed = false;
  #stats = { shipped: 0, dropped: 0, failedPushes: 0 };

  constructor(options: LokiShipperOptions) {
    this.#options = options;
    this.#endpoint = new URL("loki/api/v1/push", options.url.replace(/\/*$/, "/")).href;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#now = options.now ?? Date.now;
    if (options.autoStart ?? true) {
      this.#interval = setInterval(() => void this.tick(), Math.max(options.batchIntervalMs, 10));
      Deno.unrefTimer(this.#interval as unknown as number);
    }
  }

  /** Counters now. */
  stats(): LokiShipperStats {
    return { ...this.#stats, buffered: this.#length() + this.#inFlightLines };
  }

  /** Buffers one entry; never waits, never throws. */
  push(entry: LokiEntry): void {
    if (this.#closed) {
      this.#stats.dropped++;
      return;
    }
    if (this.#length() + this.#inFlightLines >= this.#options.maxBufferLines) {
      this.#stats.dropped++;
      // The oldest waiting line goes; if every held line is in flight, this one does.
      if (this.#length() === 0) return;
      this.#items[this.#head++] = undefined;
      this.#compact();
    }
    this.#items.push(entry);
  }

  /**
   * Sends what is buffered unless a push is in flight or a retry is not yet due;
   * resolves when this round is over. Never rejects.
   */
  tick(): Promise<void> {
    if (this.#inFlight !== undefined) return this.#inFlight;
    if (this.#length() === 0 || this.#now() < this.#retryAt) return Promise.resolve();
    this.#inFlight = this.#drain().finally(() => this.#inFlight = undefined);
    return this.#inFlight;
  }

  /** Stops the timer and makes one last attempt to ship what is buffered; the rest is dropped. */
  async close(): Promise<void> {
    if (this.#interval !== undefined) clearInterval(this.#interval);
    this.#interval = undefined;
    await this.#inFlight;
    this.#retryAt = 0;
    await this.tick();
    this.#closed = true;
    this.#stats.dropped += this.#length();
    this.#items = [];
    this.#head = 0;
  }

  #length(): number {
    return this.#items.length - this.#head;
  }

  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }

  async #drain(): Promise<void> {
    const max = this.#options.maxBatchLines ?? 1000;
    while (this.#length() > 0) {
      const end = Math.min(this.#items.length, this.#head + max);
      const batch = this.#items.slice(this.#head, end) as LokiEntry[];
      this.#head = end;
      this.#compact();
      this.#inFlightLines = batch.length;
      try {
        await this.#send(batch);
        this.#stats.shipped += batch.length;
        this.#failures = 0;
        this.#retryAt = 0;
      } catch (error) {
        const failure = error as PushFailure;
        this.#stats.failedPushes++;
        if (this.#failures === 0) {
          this.#options.onError?.(`Cannot ship logs to Loki: ${failure.message}`);
        }
        this.#failures++;
        if (failure.retry) {
          this.#requeue(batch);
          const initial = this.#options.initialBackoffMs ?? 500;
          const delay = Math.min(
            initial * 2 ** (this.#failures - 1),
            this.#options.maxBackoffMs ?? 30_000,
          );
          this.#retryAt = this.#now() + delay;
          return;
        }
        this.#stats.dropped += batch.length;
      } finally {
        this.#inFlightLines = 0;
      }
    }
  }

  /** Puts a failed batch back in front, then trims the oldest beyond the bound. */
  #requeue(batch: LokiEntry[]): void {
    const waiting = this.#items.slice(this.#head) as LokiEntry[];
    const all = batch.concat(waiting);
    const excess = Math.max(0, all.length - this.#options.maxBufferLines);
    this.#stats.dropped += excess;
    this.#items = excess > 0 ? all.slice(excess) : all;
    this.#head = 0;
  }

  async #send(batch: LokiEntry[]): Promise<void> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.#options.tenant !== undefined) headers["X-Scope-OrgID"] = this.#options.tenant;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.#options.timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(this.#endpoint, {
        method: "POST",
        headers,
        body: JSON.stringify(lokiPushBody(batch)),
        signal: abort.signal,
      });
      text = await response.text();
    } catch (error) {
      const reason = abort.signal.aborted
        ? `no answer within loki.timeout (${this.#options.timeoutMs} ms)`
        : (error as Error).message;
      throw new PushFailure(`${this.#endpoint}: ${reason}`, true);
    } finally {
      clearTimeout(timer);
    }
    if (response.ok) return;
    const retry = response.status === 429 || response.status >= 500;
    throw new PushFailure(
      `${this.#endpoint} answered ${response.status}: ${text.slice(0, 200)}`,
      retry,
    );
  }
}
