/**
 * @module The layer path's contract with the forward pass: a layer's stand-alone gate,
 * and one layer for an entry request (dispatch to the executable, peers and on-demand
 * experts, then the composed execution), with what each layer tells the forward pass.
 */
import type { BatchObserver } from "../batching/batch_queues.ts";
import type { TokenRouting } from "../moe/routing.ts";
import type { HopInfo } from "../timing/request_timing.ts";

/** What the forward pass needs of the layer machinery. */
export interface LayerPath {
  /** A layer's gate logits `[rows, experts]` from a stand-alone gate execution. */
  gate(
    layer: number,
    input: Float32Array,
    rows: number,
    onBatch?: BatchObserver,
  ): Promise<Float32Array>;
  /**
   * Runs `layer` for an entry request: `hidden` `[rows, d]` (owned: it may be handed to
   * another thread) routed by `routing`. Resolves the next hidden state and, when the
   * executable fuses it (and it saw every expert's result), the next layer's logits.
   */
  layer(
    layer: number,
    hidden: Float32Array,
    rows: number,
    routing: TokenRouting,
    observer: LayerObserver,
  ): Promise<{ hidden: Float32Array; logits: Float32Array | null }>;
}

/** What a layer tells the forward pass: its executions and, when it crossed backends, its hop. */
export interface LayerObserver {
  onBatch: BatchObserver;
  onHop?: (hop: HopInfo) => void;
}
