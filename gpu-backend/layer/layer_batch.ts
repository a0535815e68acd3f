/**
 * @module Pure: assembling one execution of a layer executable from several works
 * (requests' and peers' rows of one layer) and splitting its outputs back.
 *
 * A work holds `R` unique rows; its first `M` are entry tokens (they get the residual,
 * the shared experts and the next gate), the rest are rows a peer sent (they get only
 * their routed experts). Its assignments say which hosted expert sees which row with
 * which combine weight. A batch lays out every work's entry rows first and the peers'
 * rows after them — the composed graph's `rows`, with `residual` for the entry part —
 * and sorts all assignments by the executable's hosting order (a counting sort), which
 * gives `src` and the per-expert `counts`.
 */
import type { Feeds } from "../execution/graph_runner.ts";
import { LAYER_IO } from "./compose_layer.ts";

/** Routed assignments: row `row[i]` goes to expert `expert[i]` with weight `weight[i]`. */
export interface Assignments {
  row: Int32Array;
  expert: Int32Array;
  weight: Float32Array;
}

/** One group of a layer execution. */
export interface LayerWork {
  /** `[rowCount, d]` unique input rows, entry tokens first. */
  rows: Float32Array;
  rowCount: number;
  /** How many of the rows are entry tokens (`M`). */
  entry: number;
  /** `[entry, d]` residual of the entry rows; null = the entry rows themselves. */
  residual: Float32Array | null;
  /** Assignments to experts the executable hosts. */
  assign: Assignments;
}

/** A work's share of the outputs. */
export interface LayerOutcome {
  /** `[entry, d]` next hidden state of the entry rows. */
  hidden: Float32Array;
  /** `[entry, experts]` next layer's gate logits, or null when the gate is not fused. */
  logits: Float32Array | null;
  /** `[rowCount − entry, d]` Σ weight · expert(row) of the peer rows. */
  routed: Float32Array;
}

/** The assembled inputs and what splitting needs. */
export interface AssembledBatch {
  feeds: Feeds;
  /** Outputs to ask for. */
  outputs: string[];
  /** Entry rows in the batch (`M`) and all rows (`R`). */
  entryRows: number;
  totalRows: number;
  /** Rows per hosted expert, hosting order. */
  counts: Int32Array;
  split(outputs: Record<string, Float32Array>): LayerOutcome[];
}

/** Empty assignments. */
export const NO_ASSIGNMENTS: Assignments = {
  row: new Int32Array(0),
  expert: new Int32Array(0),
  weight: new Float32Array(0),
};

/**
 * Assembles `works` for an executable whose hosting order is given by `position`
 * (`[experts]`: index among `hosted` hosted experts, or -1). Throws a `RangeError` when
 * a work assigns a row to an expert the executable does not host.
 */
export function assembleLayerBatch(
  works: readonly LayerWork[],
  options: { width: number; position: Int32Array; hosted: number; fusedGate: boolean },
): AssembledBatch {
  const { width, hosted } = options;
  // Step 1: row layout — entry rows of every work, then every work's peer rows.
  const layout = layoutRows(works, width);
  const { rows, residual, entryRows, totalRows, assigned } = layout;
  // Step 2: counting sort of the assignments by hosting position.
  const { counts, src, weight } = sortAssignments(works, layout, options.position, hosted);
  // Step 3: feeds, and the split of the outputs per work.
  const outputs: string[] = [LAYER_IO.hidden];
  if (layout.peerRows > 0) outputs.push(LAYER_IO.routed);
  if (options.fusedGate) outputs.push(LAYER_IO.logits);
  return {
    feeds: {
      [LAYER_IO.rows]: { type: "float32", data: rows, dims: [totalRows, width] },
      [LAYER_IO.residual]: { type: "float32", data: residual, dims: [entryRows, width] },
      [LAYER_IO.src]: { type: "int32", data: src, dims: [assigned] },
      [LAYER_IO.counts]: { type: "int32", data: counts.slice(), dims: [hosted] },
      [LAYER_IO.weight]: { type: "float32", data: weight, dims: [assigned, 1] },
    },
    outputs,
    entryRows,
    totalRows,
    counts,
    split: (out) => splitOutputs(out, works, layout, width),
  };
}

/** Where the works' rows sit in the batch: entry rows first, then peer rows. */
interface RowLayout {
  rows: Float32Array;
  residual: Float32Array;
  /** Per work, its first entry row and its first peer row in `rows`. */
  entryAt: Int32Array;
  peerAt: Int32Array;
  entryRows: number;
  peerRows: number;
  totalRows: number;
  /** Row assignments over all works. */
  assigned: number;
}

/** Step 1: the rows and residuals of `works` in batch order (one work's own arrays as they are). */
function layoutRows(works: readonly LayerWork[], width: number): RowLayout {
  let entryRows = 0;
  let peerRows = 0;
  let assigned = 0;
  for (const work of works) {
    entryRows += work.entry;
    peerRows += work.rowCount - work.entry;
    assigned += work.assign.row.length;
  }
  const totalRows = entryRows + peerRows;
  const single = works.length === 1 ? works[0]! : null;
  const entryAt = new Int32Array(works.length);
  const peerAt = new Int32Array(works.length);
  let rows: Float32Array;
  let residual: Float32Array;
  if (single) {
    rows = single.rows.length === totalRows * width
      ? single.rows
      : single.rows.subarray(0, totalRows * width);
    residual = single.residual ?? single.rows.subarray(0, single.entry * width);
  } else {
    rows = new Float32Array(totalRows * width);
    residual = new Float32Array(entryRows * width);
    let entryOffset = 0;
    let peerOffset = entryRows;
    works.forEach((work, i) => {
      entryAt[i] = entryOffset;
      peerAt[i] = peerOffset;
      const entryValues = work.rows.subarray(0, work.entry * width);
      rows.set(entryValues, entryOffset * width);
      residual.set(work.residual ?? entryValues, entryOffset * width);
      rows.set(
        work.rows.subarray(work.entry * width, work.rowCount * width),
        peerOffset * width,
      );
      entryOffset += work.entry;
      peerOffset += work.rowCount - work.entry;
    });
  }
  if (single) peerAt[0] = single.entry;
  return { rows, residual, entryAt, peerAt, entryRows, peerRows, totalRows, assigned };
}

/**
 * Step 2: the assignments grouped by hosting position (counting sort): per position its
 * count, and per slot the batch row and combine weight.
 */
function sortAssignments(
  works: readonly LayerWork[],
  layout: RowLayout,
  position: Int32Array,
  hosted: number,
): { counts: Int32Array; src: Int32Array; weight: Float32Array } {
  const { entryAt, peerAt, assigned } = layout;
  const counts = new Int32Array(hosted);
  for (const work of works) {
    const experts = work.assign.expert;
    for (let i = 0; i < experts.length; i++) {
      const at = position[experts[i]!] ?? -1;
      if (at < 0) {
        throw new RangeError(
          `Cannot assemble layer batch: expert ${experts[i]} is not hosted by this executable`,
        );
      }
      counts[at]!++;
    }
  }
  const next = new Int32Array(hosted);
  for (let k = 1; k < hosted; k++) next[k] = next[k - 1]! + counts[k - 1]!;
  const src = new Int32Array(assigned);
  const weight = new Float32Array(assigned);
  works.forEach((work, i) => {
    const { row, expert, weight: w } = work.assign;
    for (let j = 0; j < row.length; j++) {
      const local = row[j]!;
      const global = local < work.entry ? entryAt[i]! + local : peerAt[i]! + local - work.entry;
      const slot = next[position[expert[j]!]!]!++;
      src[slot] = global;
      weight[slot] = w[j]!;
    }
  });
  return { counts, src, weight };
}

/** Step 3's split: each work's hidden rows, gate logits and peer rows of the outputs. */
function splitOutputs(
  out: Parameters<AssembledBatch["split"]>[0],
  works: readonly LayerWork[],
  layout: RowLayout,
  width: number,
): ReturnType<AssembledBatch["split"]> {
  const { entryAt, peerAt, entryRows } = layout;
  const hidden = out[LAYER_IO.hidden]!;
  const routed = out[LAYER_IO.routed];
  const logits = out[LAYER_IO.logits];
  const gateWidth = logits && entryRows > 0 ? logits.length / entryRows : 0;
  return works.map((work, i) => {
    const peer = work.rowCount - work.entry;
    return {
      hidden: hidden.subarray(entryAt[i]! * width, (entryAt[i]! + work.entry) * width),
      logits: logits
        ? logits.subarray(entryAt[i]! * gateWidth, (entryAt[i]! + work.entry) * gateWidth)
        : null,
      routed: routed && peer > 0
        ? routed.subarray(peerAt[i]! * width, (peerAt[i]! + peer) * width)
        : new Float32Array(0),
    };
  });
}
