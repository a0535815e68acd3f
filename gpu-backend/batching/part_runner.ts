/**
 * @module The per-expert path's runner contract: one model part (gate, routed or shared
 * expert) on a batch of rows. The micro-batcher implements it in front of an executor,
 * the expert dispatcher in front of peers; the per-expert forward pass consumes it.
 */
import type { ModelPart } from "../../shared/model_manifest.ts";
import type { BatchObserver } from "./batch_queues.ts";

/** Runs one model part; takes ownership of `input` (it may be transferred). */
export interface PartRunner {
  run(
    part: ModelPart,
    input: Float32Array,
    rows: number,
    onBatch?: BatchObserver,
  ): Promise<Float32Array>;
}
