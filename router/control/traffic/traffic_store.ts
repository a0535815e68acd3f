/**
 * @module The traffic series in Deno KV: writes closed buckets (adding to whatever the
 * bucket already holds), deletes buckets past retention, and reads series back.
 *
 * Design: one bucket of one model becomes a handful of entries (layout in
 * `bucket_traffic.ts`), written with checked read-modify-writes in atomic batches (one
 * batch unless a model has over {@linkcode BATCH} entries per bucket). Retention is
 * enforced with explicit timestamps: `sweep()` deletes every bucket older than
 * `now − retention` and readers never return one, whatever KV expiry does (entries also
 * carry `expireIn` as a backstop). Readers fill missing buckets with 0.
 *
 * Many routers: each adds its requests (volume, affinity) under its own `shard` key of a
 * bucket, `[…, bucketStart, shard]`, so routers never contend for one entry and readers
 * sum the shards; pool-wide expert load comes from the leader alone (unsharded). A
 * contended or busy ("database is locked") commit is retried with backoff.
 */
import type { Clock } from "../../runtime/clock.ts";
import { withKvRetry } from "../state/kv_retry.ts";
import {
  addVector,
  addVolume,
  AFFINITY_PREFIX,
  EXPERT_PREFIX,
  INDEX_PREFIX,
  indexOf,
  mergeIndex,
  type ModelBucket,
  type SeriesIndex,
  VOLUME_PREFIX,
  type VolumeValue,
} from "./bucket_traffic.ts";
import type { SeriesKey } from "./series_key.ts";
import { bucketStart, checkBucketGrid, oldestKept } from "../state/bucket_grid.ts";

/** Options of {@linkcode TrafficStore}. */
export interface TrafficStoreOptions {
  clock: Pick<Clock, "now">;
  /** Bucket width (ms), `traffic.bucket`; default 60 000. */
  bucketMs?: number;
  /** How long buckets are kept (ms), `traffic.retention`; default 14 days. */
  retentionMs?: number;
  /** This writer's shard of request-derived entries (the router id); default none. */
  shard?: string;
}

/** One bucket of a series. */
export interface SeriesPoint {
  /** Bucket start (ms since the Unix epoch). */
  at: number;
  value: number;
}

/** `[type]` → `[layer][expert]` expert selections by requests of that type. */
export type AffinityCounts = Record<string, number[][]>;

/** Entries per atomic batch (KV allows 100 checks and 10 keys per `getMany`). */
const BATCH = 100;
const MAX_ATTEMPTS = 8;

interface Write {
  key: Deno.KvKey;
  merge(old: unknown): unknown;
}

/** Reads and writes the traffic series; see the module doc. */
export class TrafficStore {
  readonly bucketMs: number;
  readonly retentionMs: number;
  readonly #kv: Deno.Kv;
  readonly #clock: Pick<Clock, "now">;
  readonly #shard: Deno.KvKey;

  constructor(kv: Deno.Kv, options: TrafficStoreOptions) {
    this.#kv = kv;
    this.#clock = options.clock;
    this.#shard = options.shard === undefined ? [] : [options.shard];
    this.bucketMs = options.bucketMs ?? 60_000;
    this.retentionMs = options.retentionMs ?? 14 * 86_400_000;
    checkBucketGrid(this.bucketMs, this.retentionMs, "traffic series");
  }

  /** Start of the bucket holding `ms`. */
  bucketStart(ms: number): number {
    return bucketStart(ms, this.bucketMs);
  }

  /** Start of the oldest bucket kept at `now`: the first starting at or after `now − retention`. */
  oldestKept(now = this.#clock.now()): number {
    return oldestKept(now, this.bucketMs, this.retentionMs);
  }

  /** Adds one model's bucket to KV (atomic per batch of entries). */
  async write(model: string, startMs: number, bucket: ModelBucket): Promise<void> {
    const writes: Write[] = [{
      key: [...VOLUME_PREFIX, model, startMs, ...this.#shard],
      merge: (old) => addVolume(old as VolumeValue | null, bucket.volume),
    }];
    for (const [layer, tokens] of bucket.expertTokens) {
      writes.push({
        key: [...EXPERT_PREFIX, model, layer, startMs],
        merge: (old) => addVector([...(old as number[] | null ?? [])], tokens),
      });
    }
    for (const [type, layers] of bucket.affinity) {
      for (const [layer, counts] of layers) {
        writes.push({
          key: [...AFFINITY_PREFIX, model, type, layer, startMs, ...this.#shard],
          merge: (old) => addVector([...(old as number[] | null ?? [])], counts),
        });
      }
    }
    const index = indexOf(startMs, bucket);
    writes.push({
      key: [...INDEX_PREFIX, model],
      merge: (old) => mergeIndex(old as SeriesIndex | null, index),
    });
    for (let i = 0; i < writes.length; i += BATCH) {
      await this.#commit(writes.slice(i, i + BATCH), `${model} bucket ${startMs}`);
    }
  }

  /**
   * Adds expert tokens to buckets of `model` (`adds`: bucket start, layer, tokens per
   * expert) in one atomic commit together with what `extra` returns — the leader's fence
   * check and the cursors saying which backend counters the series now holds — asked
   * again before every attempt. `"fenced"` when `extra` answers null (this writer may no
   * longer write: nothing is written); retried while other writers change the entries.
   */
  async addExpertTokens(
    model: string,
    adds: readonly { start: number; layer: number; tokens: readonly number[] }[],
    extra: () => Promise<{ checks: Deno.AtomicCheck[]; sets: [Deno.KvKey, unknown][] } | null>,
  ): Promise<"written" | "fenced"> {
    const merged = new Map<string, { key: Deno.KvKey; tokens: number[] }>();
    const index: SeriesIndex = { firstBucket: Infinity, requestTypes: [], experts: [] };
    for (const { start, layer, tokens } of adds) {
      const key = [...EXPERT_PREFIX, model, layer, start];
      const entry = merged.get(JSON.stringify(key)) ??
        merged.set(JSON.stringify(key), { key, tokens: [] }).get(JSON.stringify(key))!;
      addVector(entry.tokens, tokens);
      index.firstBucket = Math.min(index.firstBucket, start);
      while (index.experts.length <= layer) index.experts.push(0);
      index.experts[layer] = Math.max(index.experts[layer]!, tokens.length);
    }
    const writes: Write[] = [...merged.values()].map(({ key, tokens }) => ({
      key,
      merge: (old) => addVector([...(old as number[] | null ?? [])], tokens),
    }));
    if (writes.length > 0) {
      writes.push({
        key: [...INDEX_PREFIX, model],
        merge: (old) => mergeIndex(old as SeriesIndex | null, index),
      });
    }
    const expireIn = this.retentionMs + this.bucketMs;
    for (let tries = 0; tries < MAX_ATTEMPTS; tries++) {
      const also = await extra();
      if (also === null) return "fenced";
      const attempt = async () => {
        const entries: Deno.KvEntryMaybe<unknown>[] = [];
        for (let i = 0; i < writes.length; i += 10) {
          entries.push(...await this.#kv.getMany(writes.slice(i, i + 10).map((w) => w.key)));
        }
        const op = this.#kv.atomic();
        writes.forEach((write, i) => {
          op.check(entries[i]!);
          const options = write.key[0] === INDEX_PREFIX[0] ? {} : { expireIn };
          op.set(write.key, write.merge(entries[i]!.value), options);
        });
        for (const check of also.checks) op.check(check);
        for (const [key, value] of also.sets) op.set(key, value);
        return (await op.commit()).ok;
      };
      if (await withKvRetry(attempt)) return "written";
      await new Promise((resolve) => setTimeout(resolve, 5 * 2 ** tries * (0.5 + Math.random())));
    }
    throw new Error(`Cannot write expert tokens of ${model}: the entries kept changing`);
  }

  async #commit(writes: Write[], what: string): Promise<void> {
    // Index entries never expire; bucket entries outlive retention by a bucket at most.
    const expireIn = this.retentionMs + this.bucketMs;
    const attempt = async () => {
      const entries: Deno.KvEntryMaybe<unknown>[] = [];
      for (let i = 0; i < writes.length; i += 10) {
        entries.push(...await this.#kv.getMany(writes.slice(i, i + 10).map((w) => w.key)));
      }
      const op = this.#kv.atomic();
      writes.forEach((write, i) => {
        const entry = entries[i]!;
        op.check(entry);
        const options = write.key[0] === INDEX_PREFIX[0] ? {} : { expireIn };
        op.set(write.key, write.merge(entry.value), options);
      });
      return (await op.commit()).ok;
    };
    for (let tries = 0; tries < MAX_ATTEMPTS; tries++) {
      if (await withKvRetry(attempt)) return;
      // Another writer changed an entry (the shared index): back off, read again.
      await new Promise((resolve) => setTimeout(resolve, 5 * 2 ** tries * (0.5 + Math.random())));
    }
    throw new Error(`Cannot write traffic ${what}: the entries kept changing`);
  }

  /** Deletes every bucket older than retention; returns how many entries went. */
  async sweep(now = this.#clock.now()): Promise<number> {
    const cutoff = this.oldestKept(now);
    let deleted = 0;
    for await (
      const { key, value: index } of this.#kv.list<SeriesIndex>({ prefix: INDEX_PREFIX })
    ) {
      const model = key[1] as string;
      const prefixes: Deno.KvKey[] = [[...VOLUME_PREFIX, model]];
      index.experts.forEach((_, layer) => prefixes.push([...EXPERT_PREFIX, model, layer]));
      for (const type of index.requestTypes) {
        index.experts.forEach((_, layer) =>
          prefixes.push([...AFFINITY_PREFIX, model, type, layer])
        );
      }
      for (const prefix of prefixes) {
        const old: Deno.KvKey[] = [];
        for await (const entry of this.#kv.list({ start: prefix, end: [...prefix, cutoff] })) {
          old.push(entry.key);
        }
        for (let i = 0; i < old.length; i += BATCH) {
          const op = this.#kv.atomic();
          for (const oldKey of old.slice(i, i + BATCH)) op.delete(oldKey);
          await op.commit();
        }
        deleted += old.length;
      }
    }
    return deleted;
  }

  /** The index of `model`, or `null` when nothing was ever written for it. */
  async index(model: string): Promise<SeriesIndex | null> {
    return (await this.#kv.get<SeriesIndex>([...INDEX_PREFIX, model])).value;
  }

  /** Models with series, sorted. */
  async models(): Promise<string[]> {
    const models: string[] = [];
    for await (const { key } of this.#kv.list({ prefix: INDEX_PREFIX })) {
      models.push(key[1] as string);
    }
    return models.sort();
  }

  /** Every series of `model` (default: of every model). */
  async listSeries(model?: string): Promise<SeriesKey[]> {
    const keys: SeriesKey[] = [];
    for (const name of model === undefined ? await this.models() : [model]) {
      const index = await this.index(name);
      if (index === null) continue;
      for (const kind of ["requests", "tokens"] as const) {
        keys.push({ kind, model: name });
        for (const requestType of index.requestTypes) keys.push({ kind, model: name, requestType });
      }
      index.experts.forEach((count, layer) => {
        for (let expert = 0; expert < count; expert++) {
          keys.push({ kind: "expert", model: name, layer, expert });
        }
      });
    }
    return keys;
  }

  /** Whether `key` names a series that exists. */
  async has(key: SeriesKey): Promise<boolean> {
    const index = await this.index(key.model);
    if (index === null) return false;
    if (key.kind === "expert") return key.expert < (index.experts[key.layer] ?? 0);
    return key.requestType === undefined || index.requestTypes.includes(key.requestType);
  }

  /** Values of `key` for the buckets starting in [`fromMs`, `toMs`), 0 where missing. */
  async values(key: SeriesKey, fromMs: number, toMs: number): Promise<number[]> {
    const from = Math.max(this.bucketStart(fromMs), this.oldestKept());
    const count = Math.max(0, Math.ceil((toMs - from) / this.bucketMs));
    const values = new Array<number>(count).fill(0);
    const pick = key.kind === "expert"
      ? (value: unknown) => (value as number[])[key.expert] ?? 0
      : (value: unknown) => {
        const volume = key.requestType === undefined
          ? value as VolumeValue
          : (value as VolumeValue).types[key.requestType];
        return volume === undefined ? 0 : key.kind === "requests" ? volume.requests : volume.tokens;
      };
    const prefix = key.kind === "expert"
      ? [...EXPERT_PREFIX, key.model, key.layer]
      : [...VOLUME_PREFIX, key.model];
    for await (const entry of this.#rangeEntries(prefix, from, from + count * this.bucketMs)) {
      // Bucket start right after the prefix; shards of one bucket add up.
      const i = ((entry.key[prefix.length] as number) - from) / this.bucketMs;
      if (Number.isInteger(i) && i >= 0 && i < count) values[i]! += pick(entry.value);
    }
    return values;
  }

  /** The buckets of `key` in [`fromMs`, `toMs`) as `{at, value}`, 0 where missing. */
  async series(key: SeriesKey, fromMs: number, toMs: number): Promise<SeriesPoint[]> {
    const from = Math.max(this.bucketStart(fromMs), this.oldestKept());
    const values = await this.values(key, from, toMs);
    return values.map((value, i) => ({ at: from + i * this.bucketMs, value }));
  }

  /** Share of requests per request type of `model` in [`fromMs`, `toMs`); `{}` if none. */
  async requestTypeMix(
    model: string,
    fromMs: number,
    toMs: number,
  ): Promise<Record<string, number>> {
    const totals: Record<string, number> = {};
    let all = 0;
    const from = Math.max(this.bucketStart(fromMs), this.oldestKept());
    for await (const entry of this.#rangeEntries([...VOLUME_PREFIX, model], from, toMs)) {
      for (const [type, volume] of Object.entries((entry.value as VolumeValue).types)) {
        totals[type] = (totals[type] ?? 0) + volume.requests;
        all += volume.requests;
      }
    }
    const mix: Record<string, number> = {};
    for (const [type, requests] of Object.entries(totals)) if (all > 0) mix[type] = requests / all;
    return mix;
  }

  /**
   * Expert selections per request type of `model` in [`fromMs`, `toMs`): the observed
   * request-type → expert affinity. Default window: the last 24 h up to now.
   */
  async affinity(model: string, fromMs?: number, toMs?: number): Promise<AffinityCounts> {
    const now = this.#clock.now();
    const to = toMs ?? now + this.bucketMs;
    const from = Math.max(this.bucketStart(fromMs ?? now - 86_400_000), this.oldestKept());
    const index = await this.index(model);
    const counts: AffinityCounts = {};
    for (const type of index?.requestTypes ?? []) {
      const layers: number[][] = [];
      for (let layer = 0; layer < (index?.experts.length ?? 0); layer++) {
        const sum: number[] = [];
        const prefix = [...AFFINITY_PREFIX, model, type, layer];
        for await (const entry of this.#rangeEntries(prefix, from, to)) {
          addVector(sum, entry.value as number[]);
        }
        layers.push(sum);
      }
      if (layers.some((layer) => layer.some((count) => count > 0))) counts[type] = layers;
    }
    return counts;
  }

  #rangeEntries(prefix: Deno.KvKey, fromMs: number, toMs: number) {
    return this.#kv.list({ start: [...prefix, fromMs], end: [...prefix, toMs] }, {
      batchSize: 500,
    });
  }
}
