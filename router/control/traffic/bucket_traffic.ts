/**
 * @module What one bucket of traffic holds for one model, the KV entries it becomes,
 * and how two partial buckets add up (a bucket written twice — after a restart in
 * mid-bucket, or by two routers — is the sum of both).
 *
 * KV layout (values are plain objects/arrays; `start` is the bucket start, ms):
 * - `["series", "volume", model, start]` → {@linkcode VolumeValue}
 * - `["series", "expert", model, layer, start]` → tokens per expert (`number[]`)
 * - `["series", "affinity", model, type, layer, start]` → selections per expert
 * - `["series_index", model]` → {@linkcode SeriesIndex} (what exists, since when)
 */

/** Requests and tokens. */
export interface Volume {
  requests: number;
  tokens: number;
}

/** The volume entry of one bucket: totals and per request type. */
export interface VolumeValue extends Volume {
  types: Record<string, Volume>;
}

/** Which series a model has; kept in `["series_index", model]`. */
export interface SeriesIndex {
  /** Start of the oldest bucket ever written (ms). */
  firstBucket: number;
  requestTypes: string[];
  /** `[layer]` → experts seen in that layer (0 for a layer never seen). */
  experts: number[];
}

/** One model's traffic in one bucket, accumulated in memory. */
export interface ModelBucket {
  volume: VolumeValue;
  /** layer → tokens per expert (load-report rates × round interval). */
  expertTokens: Map<number, number[]>;
  /** type → layer → selections per expert (from each request's expert counts). */
  affinity: Map<string, Map<number, number[]>>;
}

/** An empty model bucket. */
export function emptyModelBucket(): ModelBucket {
  return {
    volume: { requests: 0, tokens: 0, types: {} },
    expertTokens: new Map(),
    affinity: new Map(),
  };
}

/** Key prefixes of the series. */
export const VOLUME_PREFIX = ["series", "volume"] as const;
export const EXPERT_PREFIX = ["series", "expert"] as const;
export const AFFINITY_PREFIX = ["series", "affinity"] as const;
export const INDEX_PREFIX = ["series_index"] as const;

/** Adds `add` into `into` element-wise, growing `into`; returns `into`. */
export function addVector(into: number[], add: readonly number[]): number[] {
  while (into.length < add.length) into.push(0);
  for (let i = 0; i < add.length; i++) into[i]! += add[i] ?? 0;
  return into;
}

/** The sum of two volume entries (new object). */
export function addVolume(a: VolumeValue | null, b: VolumeValue): VolumeValue {
  const types: Record<string, Volume> = {};
  for (const source of [a?.types ?? {}, b.types]) {
    for (const [type, volume] of Object.entries(source)) {
      const into = types[type] ??= { requests: 0, tokens: 0 };
      into.requests += volume.requests;
      into.tokens += volume.tokens;
    }
  }
  return {
    requests: (a?.requests ?? 0) + b.requests,
    tokens: (a?.tokens ?? 0) + b.tokens,
    types,
  };
}

/** The union of two index entries (new object). */
export function mergeIndex(a: SeriesIndex | null, b: SeriesIndex): SeriesIndex {
  if (a === null) return { ...b, requestTypes: [...b.requestTypes].sort() };
  const experts = [...a.experts];
  b.experts.forEach((count, layer) => experts[layer] = Math.max(experts[layer] ?? 0, count));
  return {
    firstBucket: Math.min(a.firstBucket, b.firstBucket),
    requestTypes: [...new Set([...a.requestTypes, ...b.requestTypes])].sort(),
    experts: Array.from(experts, (count) => count ?? 0),
  };
}

/** The index entry describing one model bucket. */
export function indexOf(startMs: number, bucket: ModelBucket): SeriesIndex {
  const experts: number[] = [];
  const see = (layer: number, length: number) => {
    while (experts.length <= layer) experts.push(0);
    experts[layer] = Math.max(experts[layer]!, length);
  };
  for (const [layer, vector] of bucket.expertTokens) see(layer, vector.length);
  for (const layers of bucket.affinity.values()) {
    for (const [layer, vector] of layers) see(layer, vector.length);
  }
  return { firstBucket: startMs, requestTypes: Object.keys(bucket.volume.types), experts };
}
