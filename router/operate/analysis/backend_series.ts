/**
 * @module Per-backend efficiency series in Deno KV, recorded from every load-collector
 * round and read back by bucket.
 *
 * KV layout (same bucket width and retention as the traffic store, `traffic.bucket` and
 * `traffic.retention`; `start` is the bucket start in ms):
 * - `["series", "backend", backendId, start]` → {@linkcode BackendBucket}
 * - `["series_backend_index"]` → backend ids ever recorded (sorted)
 *
 * Each round adds its contribution to the current bucket with a checked
 * read-modify-write (so two routers sharing KV add up). Writes are queued, never awaited
 * by the round, and a failed write is logged and dropped. Retention is enforced with
 * explicit timestamps: `sweep()` deletes buckets older than `now − retention` and readers
 * never return one (entries also carry `expireIn` as a backstop).
 */
import { withKvRetry } from "../../control/state/kv_retry.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { PoolLoad } from "../../control/load/pool_load.ts";
import type { Clock } from "../../runtime/clock.ts";
import { addBackendBuckets, type BackendBucket, roundContribution } from "./backend_bucket.ts";
import { bucketStart, checkBucketGrid, oldestKept } from "../../control/state/bucket_grid.ts";

/** Key prefix of the backend buckets. */
export const BACKEND_PREFIX = ["series", "backend"] as const;
/** Key of the list of backend ids. */
export const BACKEND_INDEX_KEY = ["series_backend_index"] as const;

/** Options of {@linkcode BackendSeries}. */
export interface BackendSeriesOptions {
  clock: Pick<Clock, "now">;
  logger: Logger;
  /** Bucket width (ms), `traffic.bucket`. */
  bucketMs: number;
  /** How long buckets are kept (ms), `traffic.retention`. */
  retentionMs: number;
  /** Load-collector round interval (ms): one round's rates cover this long. */
  roundIntervalMs: number;
  /** Time between retention sweeps (ms); default 10 minutes. */
  sweepEveryMs?: number;
}

const MAX_ATTEMPTS = 5;
/** Keys per `getMany` (Deno KV's limit). */
const GET_MANY = 10;

/** Records and reads the per-backend series; see the module doc. */
export class BackendSeries {
  readonly bucketMs: number;
  readonly retentionMs: number;
  readonly #kv: Deno.Kv;
  readonly #options: BackendSeriesOptions;
  readonly #known = new Set<string>();
  #queue: Promise<void> = Promise.resolve();
  #lastSweep: number;
  #closed = false;

  constructor(kv: Deno.Kv, options: BackendSeriesOptions) {
    this.#kv = kv;
    this.#options = options;
    this.bucketMs = options.bucketMs;
    this.retentionMs = options.retentionMs;
    this.#lastSweep = options.clock.now();
    checkBucketGrid(this.bucketMs, this.retentionMs, "backend series");
  }

  /** Start of the bucket holding `ms`. */
  bucketStart(ms: number): number {
    return bucketStart(ms, this.bucketMs);
  }

  /** Start of the oldest bucket kept at `now`. */
  oldestKept(now = this.#options.clock.now()): number {
    return oldestKept(now, this.bucketMs, this.retentionMs);
  }

  /** Queues one round's contributions (returns at once; see {@linkcode settled}). */
  recordRound(load: PoolLoad): void {
    if (this.#closed) return;
    const start = this.bucketStart(load.at);
    const adds = load.backends.flatMap((backend) => {
      const add = roundContribution(backend, this.#options.roundIntervalMs);
      return add === null ? [] : [{ id: backend.name, add }];
    });
    const sweepDue = load.at - this.#lastSweep >= (this.#options.sweepEveryMs ?? 600_000);
    if (sweepDue) this.#lastSweep = load.at;
    if (adds.length === 0 && !sweepDue) return;
    this.#queue = this.#queue.then(async () => {
      try {
        for (let i = 0; i < adds.length; i += GET_MANY) {
          await this.#add(start, adds.slice(i, i + GET_MANY));
        }
        if (sweepDue) await this.sweep(load.at);
      } catch (error) {
        this.#options.logger.warn("backend series round lost", {
          bucket: start,
          error: (error as Error).message,
        });
      }
    });
  }

  /** Settles when every queued write has finished. */
  settled(): Promise<void> {
    return this.#queue;
  }

  /** Stops recording and waits for queued writes (idempotent). */
  close(): Promise<void> {
    this.#closed = true;
    return this.#queue;
  }

  async #add(start: number, adds: { id: string; add: BackendBucket }[]): Promise<void> {
    const fresh = adds.map(({ id }) => id).filter((id) => !this.#known.has(id));
    if (fresh.length > 0) await this.#addToIndex(fresh);
    const keys = adds.map(({ id }) => [...BACKEND_PREFIX, id, start]);
    const expireIn = this.retentionMs + this.bucketMs;
    // One read-modify-write; "database is locked" (another process writing) retries it.
    const attempt = async () => {
      const entries = await this.#kv.getMany<BackendBucket[]>(keys);
      const op = this.#kv.atomic();
      adds.forEach(({ add }, i) => {
        op.check(entries[i]!);
        op.set(keys[i]!, addBackendBuckets(entries[i]!.value, add), { expireIn });
      });
      return (await op.commit()).ok;
    };
    for (let tries = 0; tries < MAX_ATTEMPTS; tries++) {
      if (await withKvRetry(attempt)) return;
    }
    throw new Error(`Cannot write backend series bucket ${start}: the entries kept changing`);
  }

  async #addToIndex(ids: string[]): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const entry = await this.#kv.get<string[]>(BACKEND_INDEX_KEY);
      const merged = [...new Set([...(entry.value ?? []), ...ids])].sort();
      if ((await this.#kv.atomic().check(entry).set(BACKEND_INDEX_KEY, merged).commit()).ok) {
        for (const id of merged) this.#known.add(id);
        return;
      }
    }
    throw new Error("Cannot write the backend series index: it kept changing");
  }

  /** Backend ids with series, sorted. */
  async backends(): Promise<string[]> {
    return (await this.#kv.get<string[]>(BACKEND_INDEX_KEY)).value ?? [];
  }

  /** Deletes buckets older than retention; returns how many entries went. */
  async sweep(now = this.#options.clock.now()): Promise<number> {
    const cutoff = this.oldestKept(now);
    let deleted = 0;
    for (const id of await this.backends()) {
      const prefix = [...BACKEND_PREFIX, id];
      const old: Deno.KvKey[] = [];
      for await (const entry of this.#kv.list({ start: prefix, end: [...prefix, cutoff] })) {
        old.push(entry.key);
      }
      for (let i = 0; i < old.length; i += 100) {
        const op = this.#kv.atomic();
        for (const key of old.slice(i, i + 100)) op.delete(key);
        await op.commit();
      }
      deleted += old.length;
    }
    return deleted;
  }

  /**
   * The buckets of every backend starting in [`fromMs`, `toMs`) (clamped to retention):
   * bucket starts, and per backend `[bucket]` → bucket or undefined.
   */
  async read(fromMs: number, toMs: number): Promise<{
    buckets: number[];
    backends: Map<string, (BackendBucket | undefined)[]>;
  }> {
    const from = Math.max(this.bucketStart(fromMs), this.oldestKept());
    const count = Math.max(0, Math.ceil((toMs - from) / this.bucketMs));
    const buckets = Array.from({ length: count }, (_, i) => from + i * this.bucketMs);
    const backends = new Map<string, (BackendBucket | undefined)[]>();
    for (const id of await this.backends()) {
      const values = new Array<BackendBucket | undefined>(count).fill(undefined);
      const prefix = [...BACKEND_PREFIX, id];
      const end = from + count * this.bucketMs;
      for await (
        const entry of this.#kv.list<BackendBucket>({
          start: [...prefix, from],
          end: [...prefix, end],
        }, { batchSize: 500 })
      ) {
        const i = ((entry.key.at(-1) as number) - from) / this.bucketMs;
        if (Number.isInteger(i) && i >= 0 && i < count) values[i] = entry.value;
      }
      if (values.some((v) => v !== undefined)) backends.set(id, values);
    }
    return { buckets, backends };
  }
}
