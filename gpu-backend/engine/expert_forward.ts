/**
 * @module Gated MoE forward pass over an injected part runner.
 *
 * Per layer:
 *   Step 1: gate → logits `[T, E]`.
 *   Step 2: route → top-k experts and combine weights per token (`routing.ts`).
 *   Step 3: dispatch → for each selected expert, gather its rows and run them; shared
 *           experts run on every row. All runs of a layer are issued together, so a
 *           runner with several slots (or a micro-batcher) executes them concurrently.
 *   Step 4: combine → `h ← h + Σ_k w_k · expert_k(h) + Σ_s shared_s(h)`, accumulated in
 *           a fixed order (experts ascending, then shared) so results do not depend on
 *           which execution finished first.
 */
import type { ModelManifest } from "../../shared/model_manifest.ts";
import type { BatchInfo, BatchObserver } from "../batching/batch_queues.ts";
import type { PartRunner } from "../batching/part_runner.ts";
import type { RequestTiming } from "../timing/request_timing.ts";
import { gatherRows, scatterAddWeighted } from "../moe/combine.ts";
import {
  gateOptionsFor,
  groupRowsByExpert,
  routeTokens,
  selectionBiasFor,
} from "../moe/routing.ts";

/** Options of {@linkcode forwardMoe}. */
export interface MoeForwardOptions {
  manifest: ModelManifest;
  runner: PartRunner;
  /** Gate temperature (changes combine weights, not the choice of experts). */
  temperature: number;
  /**
   * Routing-only bias per layer (`[experts]` each; absent or `undefined` = none), added to
   * the model's own `e_score_correction_bias`: shifts which experts are selected, never
   * the combine weights (see `routing.ts`). Read for a
   * layer after `onGateLogits` of that layer returned, so the hook may still fill it.
   */
  bias?: readonly (Float32Array | undefined)[];
  /** Called with each layer's gate logits `[T, E]` before the layer is routed; do not mutate. */
  onGateLogits?: (layer: number, logits: Float32Array) => void;
  /** Where the request's time goes (its `Server-Timing`); optional. */
  timing?: RequestTiming;
}

/** Output of a forward pass. */
export interface MoeForwardResult {
  /** `[T, d_model]` hidden states after the last layer. */
  output: Float32Array;
  /** `[layers, T, top_k]` selected expert ids. */
  expertIds: Int32Array;
  /** `[layers, T, top_k]` combine weights. */
  expertWeights: Float32Array;
  /** Per layer: the largest micro-batch (groups) the routed-expert rows joined; 0 = none reported. */
  batchGroups: number[];
}

/** Runs the whole model on `tokens` (`[rows, d_model]`). */
export async function forwardMoe(
  tokens: Float32Array,
  rows: number,
  options: MoeForwardOptions,
): Promise<MoeForwardResult> {
  const { manifest, runner } = options;
  const width = manifest.d_model;
  const topK = manifest.top_k;
  const expertIds = new Int32Array(manifest.layers * rows * topK);
  const expertWeights = new Float32Array(manifest.layers * rows * topK);
  const batchGroups = new Array<number>(manifest.layers).fill(0);
  let hidden = tokens;
  // Concurrent executions of one layer overlap: only the slowest counts toward the
  // request's time, so each layer reports one (the last to finish).
  const onTiming = options.timing ? (batch: BatchInfo) => options.timing!.batch(batch) : undefined;
  for (let layer = 0; layer < manifest.layers; layer++) {
    // Step 1: gate.
    const logits = await runner.run({ kind: "gate", layer }, hidden.slice(), rows, onTiming);
    options.onGateLogits?.(layer, logits);
    // Step 2: route.
    const routing = routeTokens(
      logits,
      rows,
      manifest.experts,
      {
        ...gateOptionsFor(manifest, options.temperature),
        bias: selectionBiasFor(manifest, layer, options.bias?.[layer]),
      },
    );
    expertIds.set(routing.experts, layer * rows * topK);
    expertWeights.set(routing.weights, layer * rows * topK);
    // Step 3: dispatch.
    const groups = groupRowsByExpert(routing, rows, topK, manifest.experts);
    const input = hidden;
    let last: BatchInfo | null = null;
    const onBatch: BatchObserver = (batch) => {
      if (batch.groups > batchGroups[layer]!) batchGroups[layer] = batch.groups;
      last = batch;
    };
    const routed = groups.map((group, expert) =>
      group.rows.length === 0 ? null : runner.run(
        { kind: "expert", layer, expert },
        gatherRows(input, width, group.rows),
        group.rows.length,
        onBatch,
      )
    );
    const shared = Array.from(
      { length: manifest.shared_experts },
      (_, expert) =>
        runner.run({ kind: "shared", layer, expert }, input.slice(), rows, (batch) => {
          last = batch;
        }),
    );
    const [routedOut, sharedOut] = await Promise.all([Promise.all(routed), Promise.all(shared)]);
    if (last !== null) options.timing?.batch(last);
    // Step 4: combine in a fixed order.
    const next = hidden.slice();
    routedOut.forEach((out, expert) => {
      if (out !== null) scatterAddWeighted(next, width, out, groups[expert]!, routing.weights);
    });
    for (const out of sharedOut) {
      for (let i = 0; i < out.length; i++) next[i]! += out[i]!;
    }
    hidden = next;
  }
  return { output: hidden, expertIds, expertWeights, batchGroups };
}
