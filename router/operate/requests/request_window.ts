/**
 * @module The recent requests the router answered (time, latency, rows, status), kept
 * for a sliding window: the doctor's latency variation and measured token rate.
 * An {@linkcode InferenceObserver}; O(1) per request, bounded memory.
 */
import { coefficientOfVariation } from "../../../shared/balancedness.ts";
import type { InferenceEvent } from "../../serve/observe/inference_event.ts";
import { histogramOf, type LatencyHistogram } from "./latency_histogram.ts";

/** Options of {@linkcode RequestWindow}. */
export interface RequestWindowOptions {
  /** Window length (ms); default 10 minutes. */
  windowMs?: number;
  /** Most requests kept (the oldest go first); default 100 000. */
  capacity?: number;
}

interface Entry {
  at: number;
  ms: number;
  rows: number;
  ok: boolean;
}

/** Sliding window of finished requests; see the module doc. */
export class RequestWindow {
  readonly windowMs: number;
  readonly #capacity: number;
  #entries: Entry[] = [];
  #head = 0;

  constructor(options: RequestWindowOptions = {}) {
    this.windowMs = options.windowMs ?? 600_000;
    this.#capacity = options.capacity ?? 100_000;
  }

  /** The observer to register with the app. */
  readonly observe = (event: InferenceEvent): void => {
    this.#entries.push({
      at: event.at,
      ms: event.ms,
      rows: event.rows ?? 0,
      ok: event.status < 400,
    });
    if (this.#entries.length - this.#head > this.#capacity) this.#head++;
    this.#compact();
  };

  /** Successful requests within the window ending at `now`. */
  #recent(now: number): Entry[] {
    const from = now - this.windowMs;
    const recent: Entry[] = [];
    for (let i = this.#head; i < this.#entries.length; i++) {
      const entry = this.#entries[i]!;
      if (entry.at >= from && entry.at <= now && entry.ok) recent.push(entry);
    }
    return recent;
  }

  /** Coefficient of variation of successful requests' latency; `undefined` under 20. */
  latencyCv(now: number): number | undefined {
    const recent = this.#recent(now);
    if (recent.length < 20) return undefined;
    return coefficientOfVariation(recent.map((entry) => entry.ms));
  }

  /**
   * p99 latency of successful requests over the last `windowMs` (≤ the window) ending at
   * `now`, and how many there were; `undefined` when none.
   */
  latency(now: number, windowMs = this.windowMs): { p99Ms: number; count: number } | undefined {
    const from = now - windowMs;
    const recent = this.#recent(now).filter((entry) => entry.at >= from);
    if (recent.length === 0) return undefined;
    const sorted = recent.map((entry) => entry.ms).sort((a, b) => a - b);
    const index = Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1);
    return { p99Ms: sorted[Math.max(0, index)]!, count: sorted.length };
  }

  /** Latency histogram of successful requests over the last `windowMs` ending at `now`. */
  latencyHistogram(now: number, windowMs = this.windowMs): LatencyHistogram {
    const from = now - windowMs;
    return histogramOf(
      this.#recent(now).filter((entry) => entry.at >= from).map((entry) => entry.ms),
    );
  }

  /**
   * How much traffic the window holds at `now`: successful requests, and the span (ms)
   * from the oldest of them to `now` (0 when none) — the doctor's minimum of data.
   */
  volume(now: number): { requests: number; spanMs: number } {
    const recent = this.#recent(now);
    return {
      requests: recent.length,
      spanMs: recent.length === 0 ? 0 : Math.max(0, now - recent[0]!.at),
    };
  }

  /** Rows per second answered since the oldest request in the window; `undefined` if none. */
  tokensPerS(now: number): number | undefined {
    const recent = this.#recent(now);
    if (recent.length === 0) return undefined;
    const spanMs = Math.max(1000, now - recent[0]!.at);
    return recent.reduce((sum, entry) => sum + entry.rows, 0) / (spanMs / 1000);
  }

  /** Drops the consumed prefix now and then, so the array does not grow forever. */
  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }
}
