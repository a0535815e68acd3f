/**
 * @module Evaluates a routing-only per-expert bias on recorded input rows: how much more
 * evenly it spreads the experts' selections, and how far it moves the model's outputs.
 *
 * Step 1: run the model unbiased on the rows (the reference: selections and outputs).
 * Step 2: run it again, fitting each layer's bias (`fitRoutingBias`) on that layer's gate
 *         logits in this very pass, just before the layer is routed: layer `l`'s bias is
 *         thus fitted on the inputs it will see live, i.e. with layers `< l` already
 *         biased (layer 0 sees exactly the unbiased run's logits).
 * Step 3: compare per layer the balancedness of the selection counts of both passes,
 *         the final outputs (relative L2 and max |Δ|) and the share of (row, layer, k)
 *         selections that changed (as sets per row and layer: a reordering is no change).
 */
import { balancedness } from "../../shared/balancedness.ts";
import type { ModelManifest } from "../../shared/model_manifest.ts";
import type { MoeForwardOptions, MoeForwardResult } from "../engine/expert_forward.ts";
import { type FitBiasOptions, fitRoutingBias } from "../moe/routing_bias.ts";
import { gateOptionsFor, selectionBiasFor } from "../moe/routing.ts";
import type { RecordedInputs } from "./input_recorder.ts";

/** A forward pass with explicit bias and logits hook (`MoeEngine.probe`). */
export type ProbeForward = (
  tokens: Float32Array,
  rows: number,
  options: Pick<MoeForwardOptions, "bias" | "onGateLogits">,
) => Promise<MoeForwardResult>;

/** Options of {@linkcode evaluateRoutingBias}. */
export interface BiasEvaluationOptions {
  manifest: ModelManifest;
  forward: ProbeForward;
  /** Fit steps and rate (see `fitRoutingBias`). */
  fit?: FitBiasOptions;
}

/** One layer's result; field names are the wire format of `POST /v2/advice/gate-bias`. */
export interface LayerBiasEvaluation {
  layer: number;
  balancedness_before: number;
  balancedness_after: number;
  bias: number[];
}

/** The evaluation, exactly as `POST /v2/advice/gate-bias` answers it. */
export interface BiasEvaluationReport {
  rows: number;
  layers: LayerBiasEvaluation[];
  /** Final outputs, biased vs unbiased: ‖y_b − y‖₂ / ‖y‖₂ (‖y_b − y‖₂ when ‖y‖₂ = 0), max |Δ|. */
  output_deviation: { relative_l2: number; max_abs: number };
  /** Share of (row, layer, k) selections not made by the unbiased model, in [0, 1]. */
  selection_changed: number;
}

/** Selections per expert of one layer of `[layers, rows, topK]` expert ids. */
function layerCounts(ids: Int32Array, layer: number, rows: number, topK: number, experts: number) {
  const counts = new Array<number>(experts).fill(0);
  for (let i = layer * rows * topK; i < (layer + 1) * rows * topK; i++) counts[ids[i]!]!++;
  return counts;
}

/** Selections in `after` that `before` did not make for the same (layer, row). */
function changedSelections(before: Int32Array, after: Int32Array, topK: number): number {
  let changed = 0;
  for (let start = 0; start < before.length; start += topK) {
    for (let k = 0; k < topK; k++) {
      let found = false;
      for (let j = 0; j < topK && !found; j++) found = before[start + j] === after[start + k];
      if (!found) changed++;
    }
  }
  return changed;
}

/** Relative L2 and max absolute difference of `after` vs `before`. */
function outputDeviation(before: Float32Array, after: Float32Array) {
  let diffSquares = 0;
  let squares = 0;
  let maxAbs = 0;
  for (let i = 0; i < before.length; i++) {
    const delta = after[i]! - before[i]!;
    diffSquares += delta * delta;
    squares += before[i]! * before[i]!;
    maxAbs = Math.max(maxAbs, Math.abs(delta));
  }
  const diff = Math.sqrt(diffSquares);
  return { relative_l2: squares > 0 ? diff / Math.sqrt(squares) : diff, max_abs: maxAbs };
}

/** Fits and evaluates a routing-only bias on `inputs`; see the module doc. */
export async function evaluateRoutingBias(
  inputs: RecordedInputs,
  options: BiasEvaluationOptions,
): Promise<BiasEvaluationReport> {
  const { manifest, forward } = options;
  const { rows, tokens } = inputs;
  if (rows < 1) throw new RangeError("Cannot evaluate a routing bias: no input rows");
  const { experts, top_k: topK, layers } = manifest;
  // Temperature never changes the selection, so the fit ignores it.
  const gate = gateOptionsFor(manifest);
  // Step 1: the unbiased reference.
  const unbiased = await forward(tokens.slice(), rows, {});
  // Step 2: fit each layer on the logits it gets, right before it is routed.
  const bias: Float32Array[] = [];
  const biased = await forward(tokens.slice(), rows, {
    bias,
    onGateLogits: (layer, logits) => {
      // On top of the model's own selection bias, which the forward pass adds itself.
      const own = { ...gate, bias: selectionBiasFor(manifest, layer) };
      bias[layer] = fitRoutingBias(logits, rows, experts, own, options.fit).bias;
    },
  });
  // Step 3: compare.
  return {
    rows,
    layers: Array.from({ length: layers }, (_, layer) => ({
      layer,
      balancedness_before: balancedness(
        layerCounts(unbiased.expertIds, layer, rows, topK, experts),
      ),
      balancedness_after: balancedness(layerCounts(biased.expertIds, layer, rows, topK, experts)),
      bias: Array.from(bias[layer] ?? new Float32Array(experts)),
    })),
    output_deviation: outputDeviation(unbiased.output, biased.output),
    selection_changed: changedSelections(unbiased.expertIds, biased.expertIds, topK) /
      (layers * rows * topK),
  };
}
