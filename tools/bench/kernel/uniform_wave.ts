/**
 * @module Pure: one synthetic layer wave in which every hosted expert gets exactly `r`
 * rows — the feeds of a composed layer executable (`gpu-backend/layer/compose_layer.ts`)
 * for `bench:kernel`, which times onnxruntime at a chosen fill.
 *
 * `N = r·E` assignments in expert-major order (assignment `a` → expert `⌊a / r⌋`) go to
 * rows `a mod M` with `M = ⌈N / top_k⌉` entry rows: a row's `top_k` assignments differ by
 * `M ≥ r`, so they land on distinct experts, as the gate's top-k would.
 */
import type { Feeds } from "../../../gpu-backend/execution/graph_runner.ts";
import { LAYER_IO } from "../../../gpu-backend/layer/compose_layer.ts";

/** Shape of the wave. */
export interface UniformWaveSpec {
  rowsPerExpert: number;
  experts: number;
  topK: number;
  dModel: number;
}

/** Entry rows of the wave (`⌈r·E / top_k⌉`). */
export function uniformWaveRows(spec: UniformWaveSpec): number {
  return Math.ceil((spec.rowsPerExpert * spec.experts) / spec.topK);
}

/** Feeds of a wave: rows, residual, src (grouped by expert), counts (all `r`), weight. */
export function uniformWaveFeeds(spec: UniformWaveSpec): { feeds: Feeds; rows: number } {
  const { rowsPerExpert: r, experts, dModel: d } = spec;
  if (!(Number.isInteger(r) && r >= 1) || experts < spec.topK) {
    throw new RangeError(
      `Cannot build a uniform wave: rowsPerExpert ${r} must be a positive integer and experts ${experts} ≥ top_k ${spec.topK}`,
    );
  }
  const rows = uniformWaveRows(spec);
  const assigned = r * experts;
  const src = new Int32Array(assigned);
  for (let a = 0; a < assigned; a++) src[a] = a % rows;
  const values = Float32Array.from({ length: rows * d }, (_, i) => Math.sin(i * 0.37) * 0.5);
  return {
    rows,
    feeds: {
      [LAYER_IO.rows]: { type: "float32", data: values, dims: [rows, d] },
      [LAYER_IO.residual]: { type: "float32", data: values.slice(), dims: [rows, d] },
      [LAYER_IO.src]: { type: "int32", data: src, dims: [assigned] },
      [LAYER_IO.counts]: {
        type: "int32",
        data: new Int32Array(experts).fill(r),
        dims: [experts],
      },
      [LAYER_IO.weight]: {
        type: "float32",
        data: new Float32Array(assigned).fill(1 / spec.topK),
        dims: [assigned, 1],
      },
    },
  };
}
