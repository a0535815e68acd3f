/**
 * @module Expert-load history: per (model, layer) the expert tokens/s vectors over time,
 * in Deno KV at a fixed bucket size, plus an in-memory EWMA for the current trend.
 *
 * Design: a bucket `["series", "expert_load", model, layer, bucketStartMs]` holds the
 * mean of every vector recorded in it and how many there were. Each `record()` folds
 * its vector into the bucket with a checked read-modify-write, so the bucket is current
 * after every sample (a restart loses nothing) and several routers recording the same
 * pool all contribute to one mean. Entries carry an explicit `expiresAt` and are written
 * with `expireIn`: KV deletes expired keys lazily, `window()` hides them exactly. The
 * EWMA (`e ← e + α·(x − e)`, seeded by the first vector) lives in memory only: it is a
 * routing-speed signal, rebuilt within seconds after a restart.
 * Knobs: `bucketMs` (10 s), `retentionMs` (1 h), `alpha` (0.3).
 */
import { withKvRetry } from "../state/kv_retry.ts";
import type { PoolLoad } from "./pool_load.ts";
import { bucketStart } from "../state/bucket_grid.ts";

/** Options of {@linkcode LoadHistory}. */
export interface LoadHistoryOptions {
  /** Wall clock (ms since the Unix epoch). */
  clock: { now(): number };
  /** Bucket length (ms); default 10 000. */
  bucketMs?: number;
  /** How long buckets are kept (ms); default 3 600 000. */
  retentionMs?: number;
  /** EWMA weight of the newest vector, in (0, 1]; default 0.3. */
  alpha?: number;
}

/** One stored bucket. */
export interface ExpertLoadBucket {
  model: string;
  layer: number;
  /** Bucket start (ms since the Unix epoch), a multiple of `bucketMs`. */
  startMs: number;
  bucketMs: number;
  /** Vectors folded into the mean. */
  samples: number;
  /** `[expert]` → mean tokens/s over the bucket's samples. */
  tokensPerS: number[];
  /** When the bucket stops being part of the history (ms since the Unix epoch). */
  expiresAt: number;
}

/** KV key prefix of the expert-load series. */
export const EXPERT_LOAD_PREFIX = ["series", "expert_load"] as const;

/** KV key of one bucket. */
export function expertLoadKey(model: string, layer: number, bucketStartMs: number): Deno.KvKey {
  return [...EXPERT_LOAD_PREFIX, model, layer, bucketStartMs];
}

/** Attempts of one checked read-modify-write before giving up. */
const MAX_ATTEMPTS = 5;

/** Records expert-load vectors into KV buckets and keeps their EWMA; see the module doc. */
export class LoadHistory {
  /** Bucket length (ms). */
  readonly bucketMs: number;
  /** Retention (ms). */
  readonly retentionMs: number;
  readonly #kv: Deno.Kv;
  readonly #clock: { now(): number };
  readonly #alpha: number;
  readonly #ewma = new Map<string, number[]>();

  constructor(kv: Deno.Kv, options: LoadHistoryOptions) {
    this.#kv = kv;
    this.#clock = options.clock;
    this.bucketMs = options.bucketMs ?? 10_000;
    this.retentionMs = options.retentionMs ?? 3_600_000;
    this.#alpha = options.alpha ?? 0.3;
    if (!(this.bucketMs > 0)) {
      throw new RangeError(`Cannot keep load history: bucketMs must be > 0, got ${this.bucketMs}`);
    }
    if (!(this.retentionMs > 0)) {
      throw new RangeError(
        `Cannot keep load history: retentionMs must be > 0, got ${this.retentionMs}`,
      );
    }
    if (!(this.#alpha > 0 && this.#alpha <= 1)) {
      throw new RangeError(`Cannot keep load history: alpha must be in (0, 1], got ${this.#alpha}`);
    }
  }

  /** Start of the bucket holding time `ms`. */
  bucketStart(ms: number): number {
    return bucketStart(ms, this.bucketMs);
  }

  /** Folds one expert tokens/s vector of `model`'s `layer` into the EWMA and the current bucket. */
  async record(model: string, layer: number, tokensPerS: readonly number[]): Promise<void> {
    this.#updateEwma(model, layer, tokensPerS);
    const now = this.#clock.now();
    const startMs = this.bucketStart(now);
    const key = expertLoadKey(model, layer, startMs);
    // One read-modify-write; "database is locked" (another process writing) retries it.
    const attempt = async () => {
      const entry = await this.#kv.get<ExpertLoadBucket>(key);
      const old = entry.value;
      const usable = old !== null && old.tokensPerS.length === tokensPerS.length &&
        old.expiresAt > now;
      const samples = usable ? old.samples + 1 : 1;
      const bucket: ExpertLoadBucket = {
        model,
        layer,
        startMs,
        bucketMs: this.bucketMs,
        samples,
        tokensPerS: tokensPerS.map((value, i) =>
          usable ? old.tokensPerS[i]! + (value - old.tokensPerS[i]!) / samples : value
        ),
        expiresAt: now + this.retentionMs,
      };
      const result = await this.#kv.atomic()
        .check(entry)
        .set(key, bucket, { expireIn: this.retentionMs })
        .commit();
      return result.ok;
    };
    for (let tries = 0; tries < MAX_ATTEMPTS; tries++) {
      if (await withKvRetry(attempt)) return;
    }
    throw new Error(
      `Cannot record expert load of "${model}" layer ${layer}: bucket ${startMs} kept changing`,
    );
  }

  /** Records every layer of every model in a pool aggregate. */
  async recordPool(load: PoolLoad): Promise<void> {
    await Promise.all(
      load.models.flatMap(({ model, layers }) =>
        layers.map((layer) => this.record(model, layer.layer, layer.expertTokensPerS))
      ),
    );
  }

  /** Buckets of `model`'s `layer` from the one holding `sinceMs` on, oldest first, unexpired. */
  async window(model: string, layer: number, sinceMs: number): Promise<ExpertLoadBucket[]> {
    const now = this.#clock.now();
    const prefix = [...EXPERT_LOAD_PREFIX, model, layer];
    const buckets: ExpertLoadBucket[] = [];
    const entries = this.#kv.list<ExpertLoadBucket>({
      prefix,
      start: [...prefix, this.bucketStart(sinceMs)],
    });
    for await (const entry of entries) {
      if (entry.value.expiresAt > now) buckets.push(entry.value);
    }
    return buckets;
  }

  /** The EWMA of `model`'s `layer` expert tokens/s, if anything was recorded. */
  ewma(model: string, layer: number): number[] | undefined {
    const value = this.#ewma.get(JSON.stringify([model, layer]));
    return value === undefined ? undefined : [...value];
  }

  #updateEwma(model: string, layer: number, tokensPerS: readonly number[]): void {
    const key = JSON.stringify([model, layer]);
    const old = this.#ewma.get(key);
    if (old === undefined || old.length !== tokensPerS.length) {
      this.#ewma.set(key, [...tokensPerS]);
      return;
    }
    for (let i = 0; i < old.length; i++) old[i]! += this.#alpha * (tokensPerS[i]! - old[i]!);
  }
}
