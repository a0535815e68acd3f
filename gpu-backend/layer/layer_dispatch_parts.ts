/**
 * @module Pure helpers of the layer dispatcher: assignments collected for the local
 * executable, a peer's item (each token once, with its assignments), several items of
 * one layer merged into one work, and adding outside results into a residual.
 */
import { gatherRows } from "../moe/combine.ts";
import type { ExpertAssignment } from "../moe/routing.ts";
import type { PeerLayerData } from "../peer/peer_protocol.ts";
import type { Assignments } from "./layer_batch.ts";

/** Rows computed outside the executable, to add into the residual. */
export interface Contribution {
  /** Token (or item) rows, `[n]`. */
  rows: Int32Array;
  /** `[n, d]` outputs. */
  values: Float32Array;
  /** Combine weight per row, or null when `values` are already weighted sums. */
  weights: Float32Array | null;
}

/** Assignments to the local executable, collected while dispatching. */
export class LocalAssignments {
  readonly row: number[] = [];
  readonly expert: number[] = [];
  readonly weight: number[] = [];

  /** Assignments collected so far. */
  get size(): number {
    return this.row.length;
  }

  add(expert: number, group: ExpertAssignment, weights: Float32Array): void {
    for (let i = 0; i < group.rows.length; i++) {
      this.row.push(group.rows[i]!);
      this.expert.push(expert);
      this.weight.push(weights[group.positions[i]!]!);
    }
  }

  build(): Assignments {
    return {
      row: Int32Array.from(this.row),
      expert: Int32Array.from(this.expert),
      weight: Float32Array.from(this.weight),
    };
  }
}

/** One peer's item: the tokens any of `experts` chose (each once) and their assignments. */
export function peerItem(
  layer: number,
  experts: readonly number[],
  groups: readonly ExpertAssignment[],
  weights: Float32Array,
  hidden: Float32Array,
  width: number,
): { data: PeerLayerData; tokens: Int32Array } {
  const index = new Map<number, number>();
  let assigned = 0;
  for (const expert of experts) {
    for (const row of groups[expert]!.rows) if (!index.has(row)) index.set(row, index.size);
    assigned += groups[expert]!.rows.length;
  }
  const tokens = Int32Array.from(index.keys());
  const assignRow = new Int32Array(assigned);
  const assignExpert = new Int32Array(assigned);
  const assignWeight = new Float32Array(assigned);
  let at = 0;
  for (const expert of experts) {
    const group = groups[expert]!;
    for (let i = 0; i < group.rows.length; i++, at++) {
      assignRow[at] = index.get(group.rows[i]!)!;
      assignExpert[at] = expert;
      assignWeight[at] = weights[group.positions[i]!]!;
    }
  }
  return {
    data: {
      layer,
      rows: tokens.length,
      values: gatherRows(hidden, width, tokens),
      assignRow,
      assignExpert,
      assignWeight,
    },
    tokens,
  };
}

/** Several items of one layer as one (rows concatenated, assignment rows shifted). */
export function mergeItems(items: readonly PeerLayerData[], width: number): PeerLayerData {
  if (items.length === 1) return items[0]!;
  const rows = items.reduce((sum, item) => sum + item.rows, 0);
  const assigned = items.reduce((sum, item) => sum + item.assignRow.length, 0);
  const merged: PeerLayerData = {
    layer: items[0]!.layer,
    rows,
    values: new Float32Array(rows * width),
    assignRow: new Int32Array(assigned),
    assignExpert: new Int32Array(assigned),
    assignWeight: new Float32Array(assigned),
  };
  let rowAt = 0;
  let at = 0;
  for (const item of items) {
    merged.values.set(item.values, rowAt * width);
    for (let i = 0; i < item.assignRow.length; i++) {
      merged.assignRow[at + i] = item.assignRow[i]! + rowAt;
    }
    merged.assignExpert.set(item.assignExpert, at);
    merged.assignWeight.set(item.assignWeight, at);
    rowAt += item.rows;
    at += item.assignRow.length;
  }
  return merged;
}

/** `target[rows[i]] += (weights?.[i] ?? 1) · values[i]` for every contribution. */
export function addContributions(
  target: Float32Array,
  width: number,
  contributions: readonly Contribution[],
): void {
  for (const { rows, values, weights } of contributions) {
    for (let i = 0; i < rows.length; i++) {
      const w = weights ? weights[i]! : 1;
      const base = rows[i]! * width;
      const from = i * width;
      for (let c = 0; c < width; c++) target[base + c]! += w * values[from + c]!;
    }
  }
}
