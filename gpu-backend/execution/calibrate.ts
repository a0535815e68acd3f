/**
 * @module Calibrates the simulated executor: measures one real model part with
 * onnxruntime and fits its service curve `ms = fixedMs + perRowMs·rows`. Used by
 * benchmarks; the backend itself never calibrates. The layer path's device time (one
 * composed layer execution) is measured by `gpu-backend/layer/calibrate_layer.ts`.
 */
import ort from "onnxruntime-node";
import { join } from "node:path";
import {
  type ModelManifest,
  type ModelPart,
  modelPartPath,
  ONNX_INPUT_NAME,
} from "../../shared/model_manifest.ts";
import { createSession } from "./ort_session_factory.ts";
import type { SimulatedTiming } from "./simulated_executor.ts";

export type { SimulatedTiming };

/** One measurement: an execution of `rows` rows took `ms` milliseconds. */
export interface TimingSample {
  rows: number;
  ms: number;
}

/**
 * Least-squares fit of `ms = fixedMs + perRowMs·rows` with both coefficients ≥ 0.
 *
 * When the unconstrained fit has a negative coefficient, the constrained optimum lies on
 * a boundary: the better of "all fixed" (`perRowMs = 0`) and "all per row"
 * (`fixedMs = 0`). With a single batch size the two cannot be told apart and the time
 * goes to `fixedMs`.
 */
export function fitTiming(samples: readonly TimingSample[]): SimulatedTiming {
  if (samples.length === 0) throw new RangeError("Cannot fit timing: no samples");
  for (const { rows, ms } of samples) {
    if (!(Number.isFinite(rows) && rows >= 0 && Number.isFinite(ms) && ms >= 0)) {
      throw new RangeError(`Cannot fit timing: sample {rows: ${rows}, ms: ${ms}} is not >= 0`);
    }
  }
  const n = samples.length;
  const meanRows = samples.reduce((sum, s) => sum + s.rows, 0) / n;
  const meanMs = samples.reduce((sum, s) => sum + s.ms, 0) / n;
  let covariance = 0;
  let variance = 0;
  for (const { rows, ms } of samples) {
    covariance += (rows - meanRows) * (ms - meanMs);
    variance += (rows - meanRows) ** 2;
  }
  if (variance > 0) {
    const perRowMs = covariance / variance;
    const fixedMs = meanMs - perRowMs * meanRows;
    if (perRowMs >= 0 && fixedMs >= 0) return { fixedMs, perRowMs };
  }
  // Step 2: a coefficient came out negative (or rows never vary): try both boundaries.
  const allFixed = { fixedMs: meanMs, perRowMs: 0 };
  const rowsSquared = samples.reduce((sum, s) => sum + s.rows ** 2, 0);
  const rowsTimesMs = samples.reduce((sum, s) => sum + s.rows * s.ms, 0);
  const allPerRow = { fixedMs: 0, perRowMs: rowsSquared > 0 ? rowsTimesMs / rowsSquared : 0 };
  const squaredError = (t: SimulatedTiming) =>
    samples.reduce((sum, s) => sum + (t.fixedMs + t.perRowMs * s.rows - s.ms) ** 2, 0);
  return squaredError(allPerRow) < squaredError(allFixed) ? allPerRow : allFixed;
}

/** Options of {@linkcode calibrateFromOrt}. */
export interface CalibrateOptions {
  /** Batch sizes (rows) measured; default `[1, 4, 16, 64]`. */
  batches?: readonly number[];
  /** Timed runs per batch size after one warm-up run, the median counts; default 5. */
  repeats?: number;
  /** Part measured; default routed expert 0 of layer 0. */
  part?: ModelPart;
  /** Execution provider; default `cpu`. */
  provider?: string;
}

/** A fitted timing and the per-batch medians it was fitted to. */
export interface Calibration extends SimulatedTiming {
  samples: TimingSample[];
}

/**
 * Measures one real part with a single in-thread onnxruntime session
 * (`intraOpNumThreads: 1`) at several batch sizes and fits the simulated timing.
 */
export async function calibrateFromOrt(
  modelDir: string,
  manifest: ModelManifest,
  options: CalibrateOptions = {},
): Promise<Calibration> {
  const batches = options.batches ?? [1, 4, 16, 64];
  const repeats = options.repeats ?? 5;
  if (batches.length === 0 || batches.some((rows) => !Number.isInteger(rows) || rows < 1)) {
    throw new RangeError(`Cannot calibrate: batches must be integers >= 1, got [${batches}]`);
  }
  if (!Number.isInteger(repeats) || repeats < 1) {
    throw new RangeError(`Cannot calibrate: repeats must be an integer >= 1, got ${repeats}`);
  }
  const part = options.part ?? { kind: "expert", layer: 0, expert: 0 };
  const bytes = await Deno.readFile(join(modelDir, modelPartPath(manifest, part)));
  const session = await createSession(bytes, options.provider ?? "cpu");
  try {
    const samples: TimingSample[] = [];
    for (const rows of batches) {
      const values = Float32Array.from({ length: rows * manifest.d_model }, (_, i) => Math.sin(i));
      const feeds = {
        [ONNX_INPUT_NAME]: new ort.Tensor("float32", values, [rows, manifest.d_model]),
      };
      await session.run(feeds); // warm-up: first runs allocate and plan
      const times: number[] = [];
      for (let i = 0; i < repeats; i++) {
        const started = performance.now();
        await session.run(feeds);
        times.push(performance.now() - started);
      }
      samples.push({ rows, ms: median(times) });
    }
    return { ...fitTiming(samples), samples };
  } finally {
    await session.release();
  }
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
