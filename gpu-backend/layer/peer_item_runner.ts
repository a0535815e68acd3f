/**
 * @module The peer side of the layer path: runs the layer items a peer backend sent (its
 * tokens' rows, each once, with their assignments to experts hosted here) through this
 * backend's own layer queue — as `entry` rows 0, so they join the same executions as
 * local work — and, for experts outside this backend's executable (a peer on another
 * plan, a memory budget), through the per-expert path, loaded on demand. Answers each
 * row's `Σ weight · expert(row)`.
 */
import { ApiError } from "../../shared/errors.ts";
import type { ModelManifest, ModelPart } from "../../shared/model_manifest.ts";
import { gatherRows } from "../moe/combine.ts";
import type { PeerLayerData } from "../peer/peer_protocol.ts";
import { addContributions, type Contribution, mergeItems } from "./layer_dispatch_parts.ts";
import type { LayerBatcher } from "./layer_batcher.ts";
import type { LayerExecutables } from "./layer_executables.ts";

/** Options of {@linkcode PeerItemRunner}. */
export interface PeerItemRunnerOptions {
  manifest: ModelManifest;
  batcher: LayerBatcher;
  executables: LayerExecutables;
  /** The per-expert path here (loads an expert on demand): for experts outside the executable. */
  runPart(part: ModelPart, input: Float32Array, rows: number): Promise<Float32Array>;
  /** Where rows run on demand are counted (the dispatcher's counters). */
  counters: { onDemandRows: number };
}

/** Runs peers' layer items on this backend. */
export class PeerItemRunner {
  readonly #options: PeerItemRunnerOptions;

  constructor(options: PeerItemRunnerOptions) {
    this.#options = options;
  }

  /** Runs peers' layer items here: per row `Σ weight · expert(row)`, `[rows, d]` each. */
  async run(items: readonly PeerLayerData[]): Promise<Float32Array[]> {
    const byLayer = new Map<number, number[]>();
    items.forEach((item, i) => byLayer.set(item.layer, [...(byLayer.get(item.layer) ?? []), i]));
    const results = new Array<Float32Array>(items.length);
    await Promise.all([...byLayer].map(async ([layer, indices]) => {
      const merged = mergeItems(indices.map((i) => items[i]!), this.#options.manifest.d_model);
      const output = await this.#runLayer(layer, merged);
      let at = 0;
      const width = this.#options.manifest.d_model;
      for (const i of indices) {
        const size = items[i]!.rows * width;
        results[i] = output.subarray(at, at + size);
        at += size;
      }
    }));
    return results;
  }

  async #runLayer(layer: number, item: PeerLayerData): Promise<Float32Array> {
    const { manifest, batcher, executables } = this.#options;
    const width = manifest.d_model;
    if (!Number.isInteger(layer) || layer < 0 || layer >= manifest.layers) {
      throw new ApiError("bad_request", `Cannot run layer item: layer ${layer} does not exist`);
    }
    const executable = executables.current(layer);
    executables.acquire(executable);
    try {
      // Split the assignments: the executable's experts, and the rest per expert.
      const local = { row: [] as number[], expert: [] as number[], weight: [] as number[] };
      const outside = new Map<number, { rows: number[]; weights: number[] }>();
      for (let i = 0; i < item.assignRow.length; i++) {
        const expert = item.assignExpert[i]!;
        const row = item.assignRow[i]!;
        if (expert < 0 || expert >= manifest.experts || row < 0 || row >= item.rows) {
          throw new ApiError(
            "bad_request",
            `Cannot run layer item: assignment ${i} is out of range`,
          );
        }
        if (executable.position[expert]! >= 0) {
          local.row.push(row);
          local.expert.push(expert);
          local.weight.push(item.assignWeight[i]!);
        } else {
          const entry = outside.get(expert) ?? { rows: [], weights: [] };
          entry.rows.push(row);
          entry.weights.push(item.assignWeight[i]!);
          outside.set(expert, entry);
        }
      }
      const onDemand = Promise.all([...outside].map(([expert, entry]) => {
        const rows = Int32Array.from(entry.rows);
        this.#options.counters.onDemandRows += rows.length;
        return this.#options.runPart(
          { kind: "expert", layer, expert },
          gatherRows(item.values, width, rows),
          rows.length,
        ).then((values): Contribution => ({
          rows,
          values,
          weights: Float32Array.from(entry.weights),
        }));
      }));
      let output: Float32Array;
      if (local.row.length > 0) {
        const outcome = await batcher.run(executable, {
          rows: item.values,
          rowCount: item.rows,
          entry: 0,
          residual: null,
          assign: {
            row: Int32Array.from(local.row),
            expert: Int32Array.from(local.expert),
            weight: Float32Array.from(local.weight),
          },
        });
        output = outcome.routed;
      } else {
        output = new Float32Array(item.rows * width);
      }
      addContributions(output, width, await onDemand);
      return output;
    } finally {
      executables.release(executable);
    }
  }
}
