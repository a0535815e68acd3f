/**
 * @module Pure: per-part statistics of the two execution paths summed by part key — the
 * layer executables' (from row counts) and the per-expert path's (experts run on
 * demand) — so a part's tokens and busy time are whole whichever path ran them.
 */
import type { QueueBatchStats } from "../batching/batch_queues.ts";

/** `a` and `b` summed per part key (counters added; maxima taken; batching fields of `b`). */
export function mergePartStats(
  a: readonly QueueBatchStats[],
  b: readonly QueueBatchStats[],
): QueueBatchStats[] {
  const byKey = new Map(a.map((stats) => [stats.part, { ...stats }]));
  for (const stats of b) {
    const known = byKey.get(stats.part);
    if (!known) {
      byKey.set(stats.part, { ...stats });
      continue;
    }
    byKey.set(stats.part, {
      ...stats,
      formedBatches: stats.formedBatches,
      executions: known.executions + stats.executions,
      groups: known.groups + stats.groups,
      rows: known.rows + stats.rows,
      queueDelayMsSum: known.queueDelayMsSum + stats.queueDelayMsSum,
      queueDelayMsMax: Math.max(known.queueDelayMsMax, stats.queueDelayMsMax),
      busyWaitMsSum: known.busyWaitMsSum + stats.busyWaitMsSum,
      executionMsSum: known.executionMsSum + stats.executionMsSum,
      queuedGroups: known.queuedGroups + stats.queuedGroups,
    });
  }
  return [...byKey.values()];
}
