/**
 * @module Reads a model's expert-load vectors per layer and bucket from the traffic
 * store's KV entries (`["series", "expert", model, layer, start]`, see
 * `router/control/traffic/bucket_traffic.ts`) in one range read per layer — reading expert by
 * expert through `TrafficStore.values` would cost one KV scan per expert.
 */
import { EXPERT_PREFIX } from "../../control/traffic/bucket_traffic.ts";
import type { TrafficStore } from "../../control/traffic/traffic_store.ts";

/** Expert-token vectors of one model over a range of buckets. */
export interface ExpertVectors {
  /** Bucket starts (ms). */
  buckets: number[];
  /** Experts per layer, from the series index. */
  experts: number[];
  /** The layers read, in order. */
  layers: number[];
  /** `[i][bucket]` → tokens per expert of `layers[i]` (empty where nothing was recorded). */
  vectors: number[][][];
}

/** The range `[from, to)` as bucket starts, clamped to retention like the store does. */
export function bucketRange(store: TrafficStore, fromMs: number, toMs: number): number[] {
  const from = Math.max(store.bucketStart(fromMs), store.oldestKept());
  const count = Math.max(0, Math.ceil((toMs - from) / store.bucketMs));
  return Array.from({ length: count }, (_, i) => from + i * store.bucketMs);
}

/** The expert vectors of `model` in buckets starting in [`fromMs`, `toMs`); `layers` filters. */
export async function readExpertVectors(
  kv: Deno.Kv,
  store: TrafficStore,
  model: string,
  range: { fromMs: number; toMs: number; layers?: readonly number[] },
): Promise<ExpertVectors> {
  const buckets = bucketRange(store, range.fromMs, range.toMs);
  const experts = (await store.index(model))?.experts ?? [];
  const layers = range.layers ?? experts.map((_, layer) => layer);
  const vectors: number[][][] = [];
  for (const layer of layers) {
    const series = buckets.map((): number[] => []);
    if (buckets.length > 0) {
      const prefix = [...EXPERT_PREFIX, model, layer];
      const from = buckets[0]!;
      const end = from + buckets.length * store.bucketMs;
      for await (
        const entry of kv.list<number[]>({ start: [...prefix, from], end: [...prefix, end] }, {
          batchSize: 500,
        })
      ) {
        const i = ((entry.key.at(-1) as number) - from) / store.bucketMs;
        if (Number.isInteger(i) && i >= 0 && i < buckets.length) series[i] = [...entry.value];
      }
    }
    vectors.push(series);
  }
  return { buckets, experts, layers: [...layers], vectors };
}
