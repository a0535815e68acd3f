/**
 * @module Reads a backend's batching counters from its readiness details, so a
 * benchmark can report the mean formed batch of a load interval.
 */

/** Cumulative executions and groups over expert parts. */
export interface BatchCounters {
  executions: number;
  groups: number;
}

/** Fetches the backend's cumulative batch counters (routed + shared experts and gates). */
export async function readBatchCounters(
  url: string,
  headers: Record<string, string>,
): Promise<BatchCounters> {
  const response = await fetch(`${url}/v2/health/ready`, { headers });
  const body = await response.json();
  const parts: { executions: number; groups: number }[] = body.details?.batching?.parts ?? [];
  return parts.reduce(
    (sum, part) => ({
      executions: sum.executions + part.executions,
      groups: sum.groups + part.groups,
    }),
    { executions: 0, groups: 0 },
  );
}

/** Mean groups per execution between two readings. */
export function meanFormedBatch(before: BatchCounters, after: BatchCounters): number {
  const executions = after.executions - before.executions;
  return executions > 0 ? (after.groups - before.groups) / executions : 0;
}
