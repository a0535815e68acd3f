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
 * Least-squares fit of `ms = fixedMs + perRowMs·rows` with both coefficients ≥ 0
 * ({@linkcode nonNegativeLeastSquares}). With a single batch size the two cannot be told
 * apart and the time goes to `fixedMs`.
 */
export function fitTiming(samples: readonly TimingSample[]): SimulatedTiming {
  if (samples.length === 0) throw new RangeError("Cannot fit timing: no samples");
  for (const { rows, ms } of samples) {
    if (!(Number.isFinite(rows) && rows >= 0 && Number.isFinite(ms) && ms >= 0)) {
      throw new RangeError(`Cannot fit timing: sample {rows: ${rows}, ms: ${ms}} is not >= 0`);
    }
  }
  const [fixedMs, perRowMs] = nonNegativeLeastSquares(
    samples.map((s) => [1, s.rows]),
    samples.map((s) => s.ms),
  );
  return { fixedMs: fixedMs!, perRowMs: perRowMs! };
}

/**
 * Least squares of `y ≈ Σ_j c_j · x[i][j]` with every `c_j ≥ 0`, exactly: the optimum of
 * a convex problem on the non-negative orthant is the unconstrained optimum over some
 * subset of the columns (the others 0), so every subset is solved and the best feasible
 * one wins; for the 2–3 columns of a timing fit that is at most 8 small solves. Ties go to
 * the subset found first (fewer columns, leftmost first), and a subset whose columns are
 * linearly dependent is skipped.
 */
export function nonNegativeLeastSquares(x: readonly number[][], y: readonly number[]): number[] {
  const columns = x[0]?.length ?? 0;
  let best = new Array<number>(columns).fill(0);
  let bestError = squaredError(x, y, best);
  const subsets = Array.from({ length: 2 ** columns }, (_, mask) => mask)
    .filter((mask) => mask > 0)
    .map((mask) => Array.from({ length: columns }, (_, j) => j).filter((j) => mask & (1 << j)))
    .sort((a, b) => a.length - b.length || a[0]! - b[0]!);
  for (const subset of subsets) {
    const solved = solveNormalEquations(x.map((row) => subset.map((j) => row[j]!)), y);
    if (solved === null || solved.some((c) => c < 0)) continue;
    const coefficients = new Array<number>(columns).fill(0);
    subset.forEach((j, i) => coefficients[j] = solved[i]!);
    const error = squaredError(x, y, coefficients);
    if (error < bestError - 1e-12 * Math.max(1, bestError)) {
      best = coefficients;
      bestError = error;
    }
  }
  return best;
}

function squaredError(x: readonly number[][], y: readonly number[], c: readonly number[]): number {
  return x.reduce(
    (sum, row, i) => sum + (row.reduce((t, v, j) => t + v * c[j]!, 0) - y[i]!) ** 2,
    0,
  );
}

/** The least-squares solution of `x · c ≈ y` (normal equations, pivoting); null when singular. */
function solveNormalEquations(x: readonly number[][], y: readonly number[]): number[] | null {
  const n = x[0]?.length ?? 0;
  const a = Array.from({ length: n }, (_, r) => [
    ...Array.from({ length: n }, (_, c) => x.reduce((sum, row) => sum + row[r]! * row[c]!, 0)),
    x.reduce((sum, row, i) => sum + row[r]! * y[i]!, 0),
  ]);
  const scale = Math.max(1e-300, ...a.map((row, r) => Math.abs(row[r]!)));
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) {
      if (Math.abs(a[r]![col]!) > Math.abs(a[pivot]![col]!)) pivot = r;
    }
    if (Math.abs(a[pivot]![col]!) <= 1e-9 * scale) return null;
    [a[col], a[pivot]] = [a[pivot]!, a[col]!];
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const factor = a[r]![col]! / a[col]![col]!;
      for (let c = col; c <= n; c++) a[r]![c]! -= factor * a[col]![c]!;
    }
  }
  return a.map((row, r) => row[n]! / row[r]!);
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
