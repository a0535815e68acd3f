/**
 * @module Pure: the micro-batcher's per-part statistics folded into per-kind
 * distributions for `/metrics` — formed micro-batch sizes (groups coalesced per
 * execution, into histogram buckets) and queue delay (sum and count of every group's
 * wait).
 *
 * Queues are grouped by kind (`gate`, `expert`, `shared` on the per-expert path; `gate`
 * and `layer` on the layer path): a few label values however many experts the model has.
 */
import type { PartBatchStats } from "../batching/micro_batcher.ts";
import { parsePartKey } from "../../shared/model_manifest.ts";
import type { Distribution } from "./scrape_histogram.ts";

/** Micro-batch size bounds (groups per execution): 1, 2, 4, … 64, then +Inf. */
export const BATCH_SIZE_BOUNDS: readonly number[] = [1, 2, 4, 8, 16, 32, 64];

/** The kind of a batcher queue key: a part's kind, `layer` for a layer queue, else `other`. */
function kindOf(key: string): string {
  if (/^L\d+\/layer$/.test(key)) return "layer";
  return parsePartKey(key)?.kind ?? "other";
}

/** Index of the bucket holding `value`: the first bound ≥ value, else `bounds.length`. */
export function bucketIndex(value: number, bounds: readonly number[]): number {
  const index = bounds.findIndex((bound) => value <= bound);
  return index === -1 ? bounds.length : index;
}

/**
 * Formed micro-batch sizes per part kind: bucket counts over `bounds`, the sum of
 * groups and (as the bucket total) the number of executions.
 */
export function formedBatchDistributions(
  parts: readonly PartBatchStats[],
  bounds: readonly number[] = BATCH_SIZE_BOUNDS,
): Distribution<"kind">[] {
  const byKind = new Map<string, { counts: number[]; sum: number }>();
  for (const part of parts) {
    const kind = kindOf(part.part);
    let entry = byKind.get(kind);
    if (entry === undefined) {
      byKind.set(kind, entry = { counts: new Array(bounds.length + 1).fill(0), sum: 0 });
    }
    part.formedBatches.forEach((executions, groups) => {
      if (!executions) return;
      entry.counts[bucketIndex(groups, bounds)]! += executions;
      entry.sum += groups * executions;
    });
  }
  return sortedByKind(byKind);
}

/** Queue delay per part kind: seconds waited summed over groups, and the group count. */
export function queueDelayDistributions(
  parts: readonly PartBatchStats[],
): Distribution<"kind">[] {
  const byKind = new Map<string, { counts: number[]; sum: number }>();
  for (const part of parts) {
    const kind = kindOf(part.part);
    let entry = byKind.get(kind);
    if (entry === undefined) byKind.set(kind, entry = { counts: [0], sum: 0 });
    entry.counts[0]! += part.groups;
    entry.sum += part.queueDelayMsSum / 1000;
  }
  return sortedByKind(byKind);
}

function sortedByKind(
  byKind: Map<string, { counts: number[]; sum: number }>,
): Distribution<"kind">[] {
  return [...byKind].sort(([a], [b]) => a.localeCompare(b)).map(([kind, entry]) => ({
    labels: { kind },
    counts: entry.counts,
    sum: entry.sum,
  }));
}
