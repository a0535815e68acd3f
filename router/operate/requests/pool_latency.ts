/**
 * @module The latency SLO over every router's requests, not only this one's: every
 * router publishes, each `intervalMs`, a histogram of its answered requests' latency over
 * `alerts.latency_window` (`latency_histogram.ts`) at `["latency", "router", id]` in the
 * shared KV, and reads everyone's back; entries older than `freshMs` (a stopped router's)
 * are left out. The merged histogram's p99 and count are what the `latency_slo` rule
 * judges, on every router alike (the leader announces). Without KV, or before the first
 * read, the router's own requests.
 */
import type { Logger } from "../../../shared/logger.ts";
import type { Clock } from "../../runtime/clock.ts";
import { PeriodicRounds } from "../../runtime/periodic_rounds.ts";
import { withKvRetry } from "../../control/state/kv_retry.ts";
import type { LatencyReading } from "../alerts/alert_conditions.ts";
import {
  histogramCount,
  histogramQuantile,
  type LatencyHistogram,
  mergeHistograms,
} from "./latency_histogram.ts";

/** Where routers publish: `[...LATENCY_PREFIX, routerId]` → {@linkcode PublishedLatency}. */
export const LATENCY_PREFIX: Deno.KvKey = ["latency", "router"];

/** One router's published window. */
export interface PublishedLatency {
  at: number;
  histogram: LatencyHistogram;
}

/** Options of {@linkcode PoolLatency}. */
export interface PoolLatencyOptions {
  /** Shared state; none: this router's requests only. */
  kv: Deno.Kv | undefined;
  /** This router's id (its key). */
  id: string;
  /** This router's histogram over the window ending at `now`. */
  own: (now: number) => LatencyHistogram;
  clock: Clock;
  logger: Logger;
  /** Publish and read period (ms); default 1000. */
  intervalMs?: number;
  /** Published windows older than this are a stopped router's (ms); default 5000. */
  freshMs?: number;
}

/** Reads a histogram as the SLO rule's input; undefined when empty. */
function readingOf(histogram: LatencyHistogram, routers: number): LatencyReading | undefined {
  const p99Ms = histogramQuantile(histogram, 0.99);
  return p99Ms === undefined ? undefined : { p99Ms, count: histogramCount(histogram), routers };
}

/** Every router's latency window, merged; see the module doc. */
export class PoolLatency {
  readonly #options: PoolLatencyOptions;
  readonly #rounds: PeriodicRounds;
  #pool: { at: number; histogram: LatencyHistogram; routers: number } | undefined;
  #failing = false;

  constructor(options: PoolLatencyOptions) {
    this.#options = options;
    this.#rounds = new PeriodicRounds(
      options.clock,
      options.intervalMs ?? 1000,
      () => this.#round(),
    );
  }

  /** The SLO input at `now`: the pool's while fresh, else this router's own. */
  reading(now: number): LatencyReading | undefined {
    const pool = this.#pool;
    const freshMs = this.#options.freshMs ?? 5000;
    if (pool !== undefined && now - pool.at <= freshMs) {
      return readingOf(pool.histogram, pool.routers);
    }
    return readingOf(this.#options.own(now), 1);
  }

  /** One publish-and-read now (what every interval does). */
  refresh(): Promise<void> {
    return this.#round();
  }

  /** Publishes and reads every interval until {@linkcode stop}. */
  start(): void {
    if (this.#options.kv !== undefined) void this.#rounds.start();
  }

  /** Stops, and withdraws this router's window. */
  async stop(): Promise<void> {
    await this.#rounds.stop();
    const kv = this.#options.kv;
    if (kv === undefined) return;
    try {
      await withKvRetry(() => kv.delete([...LATENCY_PREFIX, this.#options.id]));
    } catch { /* it ages out */ }
  }

  async #round(): Promise<void> {
    const { kv, id, clock, logger } = this.#options;
    if (kv === undefined) return;
    const now = clock.now();
    const own: PublishedLatency = { at: now, histogram: this.#options.own(now) };
    try {
      await withKvRetry(() => kv.set([...LATENCY_PREFIX, id], own, { expireIn: 60_000 }));
      const windows: LatencyHistogram[] = [];
      await withKvRetry(async () => {
        windows.length = 0;
        for await (const entry of kv.list<PublishedLatency>({ prefix: LATENCY_PREFIX })) {
          if (now - entry.value.at <= (this.#options.freshMs ?? 5000)) {
            windows.push(entry.value.histogram);
          }
        }
      });
      this.#pool = { at: now, histogram: mergeHistograms(windows), routers: windows.length };
      if (this.#failing) logger.info("pool latency readable again", { event: "alert" });
      this.#failing = false;
    } catch (error) {
      if (!this.#failing) {
        logger.warn("pool latency unavailable: the SLO judges this router's requests", {
          event: "alert",
          error: (error as Error).message,
        });
      }
      this.#failing = true;
    }
  }
}
