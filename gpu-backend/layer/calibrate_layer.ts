/**
 * @module Calibrates the simulated layer runner: MEASURES the device time of one layer
 * execution with onnxruntime on this machine and fits
 * `ms = fixedMs + perExpertMs·touched + perRowMs·workRows`, so a benchmark can pass a
 * measured timing to simulated backends (`backend.simulated.fixed_ms`, `per_expert_ms`,
 * `per_row_ms`) in the same run. The backend never calibrates; the CLI defaults of those
 * settings stay assumed.
 *
 * Why three terms: an execution pays for each routed expert that has rows (its small GEMMs
 * stream the expert's weights: ~16 µs for a 256 KiB expert here, about eleven rows' worth
 * of its compute) apart from the rows themselves, and a hosted expert without rows costs
 * only its nodes' dispatch on a zero-sized chunk. Replicating a hot expert splits its rows
 * into more, smaller GEMMs; a fit over rows alone hides that cost in `fixedMs`
 * (docs/results/layer-fixed-cost.md).
 *
 * How. Step 1: compose the layer graph a backend would run (`compose_layer.ts`): `hosted`
 * routed experts of `layer` spread evenly over the layer, its shared experts, and the next
 * layer's gate fused when there is one. Step 2: one onnxruntime session with one intra-op
 * thread (`createSession`, as the backend's), fed by `assembleLayerBatch` (the production
 * layout). Step 3: per batch of `M` entry tokens and per spread `t`, each token assigned to
 * `top_k` distinct experts among the first `t` hosted ones (round robin), so
 * `touched = min(t, M·top_k)` experts get rows; one warm-up run and `repeats` timed
 * `session.run()` calls, the median counts. Step 4: non-negative least squares over
 * `touched` and `workRows = M·top_k + M·S + M·E/(2·d_ff)` (assignments, shared-expert
 * rows, the fused gate's rows in expert rows) — what the simulated runner charges
 * (`simulated_layer_runner.ts`).
 *
 * The fixed part grows with the hosted experts (each adds its nodes to the graph: 0.05 ms
 * at 26, 0.74 ms at 256 here), so calibrate with the slots a backend of the benchmark's
 * pool hosts.
 */
import { join } from "node:path";
import { type ModelManifest, type ModelPart, modelPartPath } from "../../shared/model_manifest.ts";
import { median, nonNegativeLeastSquares } from "../execution/calibrate.ts";
import type { SimulatedTiming } from "../execution/simulated_executor.ts";
import { createSession } from "../execution/ort_session_factory.ts";
import { runSession } from "../execution/ort_tensors.ts";
import { composeLayerGraph } from "./compose_layer.ts";
import { assembleLayerBatch } from "./layer_batch.ts";

/** Options of {@linkcode calibrateLayerFromOrt}; every field has a default. */
export interface CalibrateLayerOptions {
  /** Routed experts the measured executable hosts (default: all of the layer). */
  hosted?: number;
  /** Entry tokens per measured execution (default `[1, 4, 16, 64]`). */
  batches?: readonly number[];
  /** Experts the tokens spread over (default `[top_k, 4·top_k, hosted]`, at most `hosted`). */
  spreads?: readonly number[];
  /** Timed runs per batch after one warm-up, the median counts (default 5). */
  repeats?: number;
  /** Layer measured (default 0; the next gate is fused when the model has one). */
  layer?: number;
}

/** One measured layer execution: work rows, experts with rows, median milliseconds. */
export interface LayerSample {
  rows: number;
  experts: number;
  ms: number;
}

/** A measured layer timing: the fit, its samples and how it was made. */
export interface LayerCalibration
  extends Required<Pick<SimulatedTiming, "fixedMs" | "perRowMs" | "perExpertMs">> {
  samples: LayerSample[];
  hosted: number;
  /** One line saying what was measured and how ("measured: …"). */
  method: string;
}

/** Measures a composed layer execution on onnxruntime (CPU, one thread) and fits the timing. */
export async function calibrateLayerFromOrt(
  modelDir: string,
  manifest: ModelManifest,
  options: CalibrateLayerOptions = {},
): Promise<LayerCalibration> {
  const { experts: E, d_model: d, top_k: K, shared_experts: S, d_ff: dFf } = manifest;
  const hosted = options.hosted ?? E;
  const batches = options.batches ?? [1, 4, 16, 64];
  const spreads = [
    ...new Set((options.spreads ?? [K, 4 * K, hosted]).map((t) => Math.min(t, hosted))),
  ];
  const repeats = options.repeats ?? 5;
  const layer = options.layer ?? 0;
  checkOptions(manifest, { hosted, batches, spreads, repeats, layer });
  // Step 1: the composed graph of `hosted` experts spread over the layer.
  const ids = Array.from({ length: hosted }, (_, i) => Math.floor((i * E) / hosted));
  const fused = layer + 1 < manifest.layers;
  const bytes = await composeForCalibration(modelDir, manifest, { layer, ids, fused });
  const position = new Int32Array(E).fill(-1);
  ids.forEach((id, i) => position[id] = i);
  // Step 2 + 3: one single-thread session, the median of timed runs per batch.
  const session = await createSession(bytes, "cpu");
  const gateRows = fused ? E / (2 * dFf) : 0;
  try {
    const samples: LayerSample[] = [];
    for (const spread of spreads) {
      for (const tokens of batches) {
        const assignments = tokens * K;
        const batch = () =>
          assembleLayerBatch([{
            rows: Float32Array.from({ length: tokens * d }, (_, i) => Math.sin(i)),
            rowCount: tokens,
            entry: tokens,
            residual: null,
            assign: {
              row: Int32Array.from({ length: assignments }, (_, i) => Math.floor(i / K)),
              expert: Int32Array.from({ length: assignments }, (_, i) => ids[i % spread]!),
              weight: new Float32Array(assignments).fill(1 / K),
            },
          }], { width: d, position, hosted, fusedGate: fused });
        const times: number[] = [];
        for (let i = 0; i <= repeats; i++) {
          const { feeds, outputs } = batch();
          const started = performance.now();
          await runSession(session, feeds, outputs);
          if (i > 0) times.push(performance.now() - started); // run 0 warms up
        }
        samples.push({
          rows: tokens * (K + S + gateRows),
          experts: Math.min(spread, assignments),
          ms: median(times),
        });
      }
    }
    // Step 4: the fit over experts touched and work rows.
    const [fixedMs, perExpertMs, perRowMs] = nonNegativeLeastSquares(
      samples.map((s) => [1, s.experts, s.rows]),
      samples.map((s) => s.ms),
    );
    return {
      fixedMs: fixedMs!,
      perExpertMs: perExpertMs!,
      perRowMs: perRowMs!,
      samples,
      hosted,
      method:
        `measured: onnxruntime CPU session, 1 thread, layer ${layer} composed with ${hosted} of ${E} experts` +
        `${S > 0 ? ` + ${S} shared` : ""}${fused ? " + next gate" : ""}, ` +
        `${batches.join("/")} tokens × top-${K} spread over ${spreads.join("/")} experts, ` +
        `median of ${repeats}, non-negative least squares over experts touched and work rows`,
    };
  } finally {
    await session.release();
  }
}

/** Bad options as a `RangeError` naming the option. */
function checkOptions(
  manifest: ModelManifest,
  options: {
    hosted: number;
    batches: readonly number[];
    spreads: readonly number[];
    repeats: number;
    layer: number;
  },
): void {
  const { experts: E, top_k: K } = manifest;
  const { hosted, batches, spreads, repeats, layer } = options;
  if (!Number.isInteger(hosted) || hosted < K || hosted > E) {
    throw new RangeError(
      `Cannot calibrate the layer: hosted must be an integer in [top_k ${K}, experts ${E}], got ${hosted}`,
    );
  }
  if (batches.length === 0 || batches.some((rows) => !Number.isInteger(rows) || rows < 1)) {
    throw new RangeError(
      `Cannot calibrate the layer: batches must be integers >= 1, got [${batches}]`,
    );
  }
  if (spreads.length === 0 || spreads.some((t) => !Number.isInteger(t) || t < K)) {
    throw new RangeError(
      `Cannot calibrate the layer: spreads must be integers >= top_k ${K}, got [${spreads}]`,
    );
  }
  if (!Number.isInteger(repeats) || repeats < 1) {
    throw new RangeError(
      `Cannot calibrate the layer: repeats must be an integer >= 1, got ${repeats}`,
    );
  }
  if (!Number.isInteger(layer) || layer < 0 || layer >= manifest.layers) {
    throw new RangeError(`Cannot calibrate the layer: the model has ${manifest.layers} layer(s)`);
  }
}

/** Step 1: the layer's graph composed of the experts `ids`, its shared experts and the next gate. */
async function composeForCalibration(
  modelDir: string,
  manifest: ModelManifest,
  options: { layer: number; ids: readonly number[]; fused: boolean },
): Promise<Uint8Array> {
  const { layer, ids, fused } = options;
  const { experts: E, d_model: d, shared_experts: S } = manifest;
  const read = (part: ModelPart) => Deno.readFile(join(modelDir, modelPartPath(manifest, part)));
  return composeLayerGraph({
    dModel: d,
    experts: await Promise.all(
      ids.map(async (id) => ({ id, bytes: await read({ kind: "expert", layer, expert: id }) })),
    ),
    shared: await Promise.all(
      Array.from({ length: S }, (_, expert) => read({ kind: "shared", layer, expert })),
    ),
    ...(fused
      ? { nextGate: { bytes: await read({ kind: "gate", layer: layer + 1 }), experts: E } }
      : {}),
  });
}
