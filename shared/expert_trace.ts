/**
 * @module Compact per-request expert trace, carried from the entry backend to the router
 * in response headers and written into request log lines.
 *
 * `x-switchyard-experts`: the MoE layers in order, separated by `;`; each layer is a
 * comma list of `expert*count` sorted by expert id, where count is how many routed
 * selections (rows × top-k slots) of this request chose that expert, e.g.
 * `3*5,7*3;1*4,30*4`. A layer without selections is written `-`, so every layer list,
 * including `[]` (the empty string), round-trips exactly.
 *
 * `x-switchyard-batches`: per layer, the largest micro-batch (in request groups) that
 * this request's routed-expert rows joined on the entry backend, `;`-separated, e.g.
 * `4;6`. `0` means no local execution reported one (all rows of that layer ran on peers).
 */

/** Response header carrying the expert counts per layer. */
export const EXPERTS_HEADER = "x-switchyard-experts";
/** Response header carrying the largest joined micro-batch per layer. */
export const BATCHES_HEADER = "x-switchyard-batches";

const EMPTY_LAYER = "-";
const ENTRY = /^(\d{1,9})\*(\d{1,9})$/;
const BATCH = /^\d{1,9}$/;
/** Longer headers are refused by the decoder (a bound on parsing work). */
const MAX_TEXT = 1 << 20;

/** Encodes expert counts per layer; entries with a count below 1 carry nothing and are left out. */
export function encodeExpertCounts(layers: ReadonlyArray<ReadonlyMap<number, number>>): string {
  return layers.map((counts) => {
    const ids = [...counts.keys()].filter((id) => (counts.get(id) ?? 0) >= 1).sort((a, b) => a - b);
    if (ids.length === 0) return EMPTY_LAYER;
    return ids.map((id) => `${id}*${counts.get(id)}`).join(",");
  }).join(";");
}

/** Decodes {@linkcode encodeExpertCounts} output; `undefined` when malformed (never throws). */
export function decodeExpertCounts(text: string): Map<number, number>[] | undefined {
  if (typeof text !== "string" || text.length > MAX_TEXT) return undefined;
  if (text === "") return [];
  const layers: Map<number, number>[] = [];
  for (const layerText of text.split(";")) {
    const counts = new Map<number, number>();
    if (layerText !== EMPTY_LAYER) {
      for (const entry of layerText.split(",")) {
        const match = ENTRY.exec(entry);
        if (match === null) return undefined;
        const id = Number(match[1]);
        const count = Number(match[2]);
        if (count < 1 || counts.has(id)) return undefined;
        counts.set(id, count);
      }
    }
    layers.push(counts);
  }
  return layers;
}

/** Encodes the largest joined micro-batch per layer, e.g. `4;6`. */
export function encodeBatchSizes(sizes: readonly number[]): string {
  return sizes.map((size) => String(Math.max(0, Math.floor(size)))).join(";");
}

/** Decodes {@linkcode encodeBatchSizes} output; `undefined` when malformed (never throws). */
export function decodeBatchSizes(text: string): number[] | undefined {
  if (typeof text !== "string" || text.length > MAX_TEXT) return undefined;
  if (text === "") return [];
  const sizes: number[] = [];
  for (const part of text.split(";")) {
    if (!BATCH.test(part)) return undefined;
    sizes.push(Number(part));
  }
  return sizes;
}

/**
 * Counts routed selections per expert for every layer of a `[layers, rows, topK]` id
 * tensor (the engine's `expertIds`). Negative ids (unused slots) are skipped.
 */
export function expertCountsFromIds(
  ids: Int32Array,
  shape: { layers: number; rows: number; topK: number },
): Map<number, number>[] {
  const perLayer = shape.rows * shape.topK;
  const layers: Map<number, number>[] = [];
  for (let layer = 0; layer < shape.layers; layer++) {
    const counts = new Map<number, number>();
    const end = (layer + 1) * perLayer;
    for (let i = layer * perLayer; i < end; i++) {
      const id = ids[i]!;
      if (id >= 0) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    layers.push(counts);
  }
  return layers;
}
