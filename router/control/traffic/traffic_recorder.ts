/**
 * @module Accumulates traffic in memory, bucket by bucket, and flushes each bucket to
 * the {@linkcode TrafficStore} once it has closed (and everything on `close()`).
 *
 * Inputs: every finished inference request ({@linkcode TrafficRecorder.observe}, an
 * `InferenceObserver`: requests, tokens = rows, expert selections per request type) and
 * every load-collector round ({@linkcode TrafficRecorder.recordRound}: per-layer expert
 * tokens/s × the round interval = tokens per expert in that bucket). A timer at every
 * bucket boundary flushes closed buckets and, every `sweepEveryMs`, deletes buckets past
 * retention. Request types beyond `maxRequestTypes` per model count as `other`, so a
 * client cannot grow the store without bound by inventing types.
 */
import type { Logger } from "../../../shared/logger.ts";
import type { PoolLoad } from "../load/pool_load.ts";
import type { InferenceEvent, InferenceObserver } from "../../serve/observe/inference_event.ts";
import type { Clock, TimerHandle } from "../../runtime/clock.ts";
import { addVector, emptyModelBucket, type ModelBucket } from "./bucket_traffic.ts";
import { UNTYPED } from "./series_key.ts";
import type { TrafficStore } from "./traffic_store.ts";

/** Options of {@linkcode TrafficRecorder}. */
export interface TrafficRecorderOptions {
  clock: Clock;
  logger: Logger;
  /** Load-collector round interval (ms): one round's rates cover this long. */
  roundIntervalMs: number;
  /** Distinct request types kept per model; default 32. */
  maxRequestTypes?: number;
  /** Time between retention sweeps (ms); default 10 minutes. */
  sweepEveryMs?: number;
  /**
   * Also flush the open bucket this often (ms; writes add to what a bucket holds, so a
   * partial flush loses nothing); default only at bucket boundaries. Bounds what a router
   * that dies holds in memory.
   */
  flushEveryMs?: number;
}

/**
 * How often the router flushes open buckets (ms): the store holds a bucket in progress up
 * to this long ago (the pre-warm forecast relies on it, `prewarm/partial_bucket.ts`).
 */
export const OPEN_BUCKET_FLUSH_MS = 1000;

/** Request type that absorbs types beyond `maxRequestTypes`. */
export const OTHER_TYPE = "other";

/** Records traffic into the store; see the module doc. */
export class TrafficRecorder {
  /** `observe` bound to this recorder, to hand to the app's observers. */
  readonly observer: InferenceObserver;
  readonly #store: TrafficStore;
  readonly #options: Required<TrafficRecorderOptions>;
  /** bucket start → model → traffic not yet flushed. */
  readonly #open = new Map<number, Map<string, ModelBucket>>();
  readonly #types = new Map<string, Set<string>>();
  #timer: TimerHandle | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #lastSweep = -Infinity;
  #closed = false;

  constructor(store: TrafficStore, options: TrafficRecorderOptions) {
    this.#store = store;
    this.#options = {
      maxRequestTypes: 32,
      sweepEveryMs: 600_000,
      flushEveryMs: Number.POSITIVE_INFINITY,
      ...options,
    };
    this.observer = (event) => this.observe(event);
  }

  /** Counts one finished request (requests whose body never decoded are not traffic). */
  observe(event: InferenceEvent): void {
    if (event.rows === undefined || this.#closed) return;
    const bucket = this.#bucket(event.model, event.at);
    const type = this.#requestType(event.model, event.requestType);
    const volume = bucket.volume;
    volume.requests += 1;
    volume.tokens += event.rows;
    const typed = volume.types[type] ??= { requests: 0, tokens: 0 };
    typed.requests += 1;
    typed.tokens += event.rows;
    if (event.experts === undefined) return;
    let layers = bucket.affinity.get(type);
    if (layers === undefined) bucket.affinity.set(type, layers = new Map());
    event.experts.forEach((counts, layer) => {
      let vector = layers.get(layer);
      if (vector === undefined) layers.set(layer, vector = []);
      for (const [expert, count] of counts) {
        while (vector.length <= expert) vector.push(0);
        vector[expert]! += count;
      }
    });
  }

  /**
   * Adds one collector round's expert tokens/s × the round interval to its bucket. The
   * router records the expert-load series from the backends' counters instead
   * (`expert_load_recorder.ts`: exact, and without a hole when the leader changes); this
   * stays for replaying rounds (tests, tools).
   */
  recordRound(load: PoolLoad): void {
    if (this.#closed) return;
    const seconds = this.#options.roundIntervalMs / 1000;
    for (const { model, layers } of load.models) {
      const bucket = this.#bucket(model, load.at);
      for (const { layer, expertTokensPerS } of layers) {
        let vector = bucket.expertTokens.get(layer);
        if (vector === undefined) bucket.expertTokens.set(layer, vector = []);
        addVector(vector, expertTokensPerS.map((rate) => rate * seconds));
      }
    }
  }

  /** Starts the flush timer (one tick per bucket boundary). */
  start(): void {
    if (this.#timer !== undefined || this.#closed) return;
    const { clock } = this.#options;
    const now = clock.now();
    const boundary = this.#store.bucketStart(now) + this.#store.bucketMs;
    const early = now + this.#options.flushEveryMs < boundary;
    const next = early ? now + this.#options.flushEveryMs : boundary;
    this.#timer = clock.setTimeout(() => {
      this.#timer = undefined;
      const flushed = early ? this.#flush(() => true, false) : this.flushClosed();
      void flushed.finally(() => this.start());
    }, next - now);
  }

  /** Flushes every bucket that has closed, then sweeps when a sweep is due. */
  flushClosed(): Promise<void> {
    const current = this.#store.bucketStart(this.#options.clock.now());
    return this.#flush((start) => start < current, true);
  }

  /** Stops the timer and flushes everything, the open bucket included (idempotent). */
  async close(): Promise<void> {
    if (this.#timer !== undefined) this.#options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#closed = true;
    await this.#flush(() => true, false);
  }

  #flush(due: (start: number) => boolean, sweep: boolean): Promise<void> {
    const ready: [number, Map<string, ModelBucket>][] = [];
    for (const [start, models] of this.#open) {
      if (due(start)) ready.push([start, models]);
    }
    for (const [start] of ready) this.#open.delete(start);
    this.#flushing = this.#flushing.then(async () => {
      for (const [start, models] of ready.sort(([a], [b]) => a - b)) {
        for (const [model, bucket] of models) {
          try {
            await this.#store.write(model, start, bucket);
          } catch (error) {
            this.#options.logger.warn("traffic bucket lost", {
              model,
              bucket: start,
              error: (error as Error).message,
            });
          }
        }
      }
      const now = this.#options.clock.now();
      if (sweep && now - this.#lastSweep >= this.#options.sweepEveryMs) {
        this.#lastSweep = now;
        try {
          const deleted = await this.#store.sweep(now);
          if (deleted > 0) this.#options.logger.debug("traffic buckets expired", { deleted });
        } catch (error) {
          this.#options.logger.warn("traffic sweep failed", { error: (error as Error).message });
        }
      }
    });
    return this.#flushing;
  }

  #bucket(model: string, at: number): ModelBucket {
    const start = this.#store.bucketStart(at);
    let models = this.#open.get(start);
    if (models === undefined) this.#open.set(start, models = new Map());
    let bucket = models.get(model);
    if (bucket === undefined) models.set(model, bucket = emptyModelBucket());
    return bucket;
  }

  #requestType(model: string, requestType: string | undefined): string {
    const type = requestType ?? UNTYPED;
    let known = this.#types.get(model);
    if (known === undefined) this.#types.set(model, known = new Set());
    if (known.has(type)) return type;
    if (known.size >= this.#options.maxRequestTypes) return OTHER_TYPE;
    known.add(type);
    return type;
  }
}
