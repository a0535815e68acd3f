/**
 * @module Pure: a synthetic layer wave with uneven rows per expert — Zipf-like expert
 * popularity (`count_e ∝ 1 / (e + 1)^s`, apportioned by largest remainder to a chosen
 * total) — for `bench:kernel`'s stacked-vs-split comparison, where padding every expert
 * to the fullest one costs more the more skewed the fill.
 *
 * Assignments in expert-major order go to rows `a mod M`, `M = max(⌈N / top_k⌉, max
 * count)`: an expert's block is at most `M` long, so a row never sees one expert twice,
 * and no row gets more than `top_k` assignments.
 */
import type { Feeds } from "../../../gpu-backend/execution/graph_runner.ts";
import { LAYER_IO } from "../../../gpu-backend/layer/compose_layer.ts";

/** Rows per expert for `experts` experts summing to `total`, Zipf exponent `s`. */
export function zipfCounts(experts: number, total: number, s: number): Int32Array {
  const weights = Array.from({ length: experts }, (_, e) => 1 / (e + 1) ** s);
  const sum = weights.reduce((a, b) => a + b, 0);
  const exact = weights.map((w) => (w / sum) * total);
  const counts = Int32Array.from(exact, Math.floor);
  let left = total - counts.reduce((a, b) => a + b, 0);
  const order = exact.map((x, e) => [x - Math.floor(x), e] as const).sort((a, b) => b[0] - a[0]);
  for (const [, e] of order) {
    if (left-- <= 0) break;
    counts[e]!++;
  }
  return counts;
}

/** Feeds of a wave whose expert `e` gets `counts[e]` rows. */
export function countsWaveFeeds(
  counts: Int32Array,
  topK: number,
  dModel: number,
): { feeds: Feeds; rows: number } {
  if (counts.length < topK || counts.some((c) => !(c >= 0))) {
    throw new RangeError(
      `Cannot build a wave: ${counts.length} experts < top_k ${topK} or a negative count`,
    );
  }
  const assigned = counts.reduce((a, b) => a + b, 0);
  const rows = Math.max(Math.ceil(assigned / topK), ...counts, 1);
  const src = new Int32Array(assigned);
  for (let a = 0; a < assigned; a++) src[a] = a % rows;
  const values = Float32Array.from({ length: rows * dModel }, (_, i) => Math.sin(i * 0.37) * 0.5);
  return {
    rows,
    feeds: {
      [LAYER_IO.rows]: { type: "float32", data: values, dims: [rows, dModel] },
      [LAYER_IO.residual]: { type: "float32", data: values.slice(), dims: [rows, dModel] },
      [LAYER_IO.src]: { type: "int32", data: src, dims: [assigned] },
      [LAYER_IO.counts]: { type: "int32", data: counts.slice(), dims: [counts.length] },
      [LAYER_IO.weight]: {
        type: "float32",
        data: new Float32Array(assigned).fill(1 / topK),
        dims: [assigned, 1],
      },
    },
  };
}
