/**
 * @module Gated MoE forward pass over layer executables: one execution per layer
 * (batched with other requests), routing in JavaScript between them.
 *
 *   Step 0: the first layer's gate → logits `[T, E]` (a stand-alone gate execution).
 *   Per layer:
 *   Step 1: route → top-k experts and combine weights per token (`routing.ts`: the
 *           model's router family, its selection bias plus the live routing-only bias).
 *   Step 2: the layer path dispatches the assignments (local executable, peers,
 *           on-demand experts) and runs the layer: `h ← h + Σ_k w_k · expert_k(h) +
 *           Σ_s shared_s(h)`, and the next layer's gate on the result when fused.
 *
 * Results do not depend on where experts ran: every contribution is added to the
 * token's residual before the layer executable adds its own (sums in float32, so the
 * order of a token's contributions may move the last bit; tests allow 1e-5).
 */
import type { BatchObserver } from "../batching/batch_queues.ts";
import type { HopInfo } from "../timing/request_timing.ts";
import type { LayerPath } from "../layer/layer_path.ts";
import type { MoeForwardOptions, MoeForwardResult } from "./expert_forward.ts";
import { gateOptionsFor, routeTokens, selectionBiasFor } from "../moe/routing.ts";

/** Options of {@linkcode forwardLayers}. */
export type LayerForwardOptions = Omit<MoeForwardOptions, "runner"> & { path: LayerPath };

/** Runs the whole model on `tokens` (`[rows, d_model]`); `tokens` is left intact. */
export async function forwardLayers(
  tokens: Float32Array,
  rows: number,
  options: LayerForwardOptions,
): Promise<MoeForwardResult> {
  const { manifest, path } = options;
  const topK = manifest.top_k;
  const expertIds = new Int32Array(manifest.layers * rows * topK);
  const expertWeights = new Float32Array(manifest.layers * rows * topK);
  const batchGroups = new Array<number>(manifest.layers).fill(0);
  const timing = options.timing;
  const onGate: BatchObserver | undefined = timing ? (batch) => timing.batch(batch) : undefined;
  const onHop = timing ? (hop: HopInfo) => timing.hop(hop) : undefined;
  // Step 0: the first gate. Inputs are private copies (a Worker runner takes them).
  let hidden: Float32Array = tokens.slice();
  let logits: Float32Array | null = await path.gate(0, tokens.slice(), rows, onGate);
  for (let layer = 0; layer < manifest.layers; layer++) {
    logits ??= await path.gate(layer, hidden.slice(), rows, onGate);
    options.onGateLogits?.(layer, logits);
    // Step 1: route.
    const routing = routeTokens(logits, rows, manifest.experts, {
      ...gateOptionsFor(manifest, options.temperature),
      bias: selectionBiasFor(manifest, layer, options.bias?.[layer]),
    });
    expertIds.set(routing.experts, layer * rows * topK);
    expertWeights.set(routing.weights, layer * rows * topK);
    // Step 2: the layer.
    const onBatch: BatchObserver = (batch) => {
      if (batch.groups > batchGroups[layer]!) batchGroups[layer] = batch.groups;
      timing?.batch(batch);
    };
    const next = await path.layer(layer, hidden, rows, routing, {
      onBatch,
      ...(onHop ? { onHop } : {}),
    });
    hidden = next.hidden;
    logits = next.logits;
  }
  return { output: hidden, expertIds, expertWeights, batchGroups };
}
