/**
 * @module Per-part counters of layer executions, in the shape the per-part batcher
 * reports (so the load report, `/metrics` and readiness read both paths alike).
 *
 * Tokens are rows: each execution adds to every hosted expert the rows assigned to it,
 * to each shared expert (and to the fused next-layer gate) the entry rows. Executions
 * count the layer executions a part took rows in. An execution's time is split over its
 * parts by arithmetic — a routed or shared row is one expert MLP, a gate row
 * `E / (2·d_ff)` of one (a `[d, E]` projection against `[d, d_ff]` + `[d_ff, d]`) — an
 * estimate, since one session run has no per-node timings. Queued groups of a layer's
 * queue are reported on that layer's gate part (the layer's entry point).
 *
 * Waves: per layer, how full its executions ran — executions, input rows, routed
 * assignments and hosted-expert slots (Σ hosted experts over executions), so
 * `assignments ÷ expert slots` is the mean rows one expert multiplied per wave (what
 * decides whether its MatMuls stream weights or compute; `deno task bench:kernel`).
 */
import { listModelParts, type ModelManifest, modelPartKey } from "../../shared/model_manifest.ts";
import type { QueueBatchStats } from "../batching/batch_queues.ts";
import type { LayerExecutable } from "./layer_executables.ts";

interface Counter {
  rows: number;
  executions: number;
  ms: number;
}

/** Cumulative fill of one layer's executions. */
export interface LayerWaves {
  layer: number;
  executions: number;
  /** Input rows (entry and peer rows). */
  rows: number;
  /** Routed (row, expert) assignments. */
  assignments: number;
  /** Hosted experts summed over executions. */
  expertSlots: number;
}

/** Mean rows per hosted expert per execution of `waves` together (0 when none ran). */
export function rowsPerExpertPerWave(waves: readonly LayerWaves[]): number {
  let assignments = 0;
  let slots = 0;
  for (const w of waves) {
    assignments += w.assignments;
    slots += w.expertSlots;
  }
  return slots > 0 ? assignments / slots : 0;
}

/** Rows, executions and estimated time per model part. */
export class LayerCounters {
  readonly #manifest: ModelManifest;
  readonly #gateUnit: number;
  readonly #parts = new Map<string, Counter>();
  readonly #waves: LayerWaves[];

  constructor(manifest: ModelManifest) {
    this.#manifest = manifest;
    this.#gateUnit = manifest.experts / (2 * manifest.d_ff);
    this.#waves = Array.from({ length: manifest.layers }, (_, layer) => ({
      layer,
      executions: 0,
      rows: 0,
      assignments: 0,
      expertSlots: 0,
    }));
    for (const part of listModelParts(manifest)) {
      this.#parts.set(modelPartKey(part), { rows: 0, executions: 0, ms: 0 });
    }
  }

  /** A stand-alone gate execution of `layer`. */
  gate(layer: number, rows: number, ms: number): void {
    this.#add(`L${layer}/gate`, rows, ms);
  }

  /**
   * A layer execution: `counts` rows per hosted expert, `entryRows` entry rows,
   * `totalRows` input rows (entry + peer rows; default `entryRows`).
   */
  layer(
    executable: LayerExecutable,
    counts: Int32Array,
    entryRows: number,
    ms: number,
    totalRows = entryRows,
  ): void {
    const { layer, experts, fusedGate } = executable;
    const shared = this.#manifest.shared_experts;
    let assigned = 0;
    for (const count of counts) assigned += count;
    const units = assigned + entryRows * shared + (fusedGate ? entryRows * this.#gateUnit : 0);
    const wave = this.#waves[layer];
    if (wave) {
      wave.executions++;
      wave.rows += totalRows;
      wave.assignments += assigned;
      wave.expertSlots += experts.length;
    }
    const perUnit = units > 0 ? ms / units : 0;
    experts.forEach((expert, i) => {
      const rows = counts[i]!;
      if (rows > 0) this.#add(`L${layer}/E${expert}`, rows, rows * perUnit);
    });
    if (entryRows === 0) return;
    for (let s = 0; s < shared; s++) this.#add(`L${layer}/S${s}`, entryRows, entryRows * perUnit);
    if (fusedGate) {
      this.#add(`L${layer + 1}/gate`, entryRows, entryRows * this.#gateUnit * perUnit);
    }
  }

  /** Per layer: cumulative fill of its executions (copies). */
  waves(): LayerWaves[] {
    return this.#waves.map((w) => ({ ...w }));
  }

  /** Per-part statistics; `queued(layer)` = groups waiting in that layer's queue now. */
  stats(queued: (layer: number) => number): QueueBatchStats[] {
    return [...this.#parts].map(([part, counter]) => {
      const gate = /^L(\d+)\/gate$/.exec(part);
      return {
        part,
        formedBatches: [],
        executions: counter.executions,
        groups: 0,
        rows: counter.rows,
        queueDelayMsSum: 0,
        queueDelayMsMax: 0,
        busyWaitMsSum: 0,
        executionMsSum: counter.ms,
        queuedGroups: gate ? queued(Number(gate[1])) : 0,
        target: 0,
        arrivalPerS: 0,
        service: { fixedMs: 0, perRowMs: 0 },
      };
    });
  }

  #add(key: string, rows: number, ms: number): void {
    const counter = this.#parts.get(key);
    if (!counter) return;
    counter.rows += rows;
    counter.executions++;
    counter.ms += ms;
  }
}
