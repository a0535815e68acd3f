/**
 * @module The placement cost model, pure: how much work each backend would do per second
 * under a plan — its expert rows plus the hops its requests make — and the full-replication
 * plan (every backend hosts every expert) with the check that it fits every memory budget.
 *
 * Model (per second, in device-milliseconds; `loads[l][e]` = expert rows/s):
 * - Entry: requests spread evenly over the `B` backends (the entry policies balance in-flight
 *   work), so a row of expert `e` enters at each backend with probability `1/B`.
 * - Execution: a row runs on a backend hosting its expert — locally when the entry hosts it
 *   (the dispatcher prefers its own replica), else on a host by replica share. With even
 *   entry both give each host its replica share of `loads[l][e]` (`backendLoads`), each row
 *   costing `expertRowMs`.
 * - Hops: the `(B − hosts(e))/B` share of `e`'s rows entering where `e` is not hosted
 *   crosses to a peer; each costs `remoteRowMs`, charged to the entry backend (its request
 *   waits and its host thread packs the frame). Rows are counted per (token, expert); the
 *   channel sends a token once per peer with all its assignments there, so this counts up
 *   to top-k times the rows the counters see — it errs towards hops being dear.
 * - Score: the busiest backend's work per second (`bottleneckMs`): the pool serves at most
 *   `1000 ÷ bottleneck` times the load. Balancedness here is mean ÷ max of work, hops
 *   included. Full replication has no hops and, with even entry, perfect balance.
 * Not modelled: a bigger batch per expert under expert parallelism (on accelerators an
 * expert's GEMM grows more efficient with rows; the measured expert-row cost reflects the
 * batch sizes the pool runs now), and weights' memory beyond the budget check.
 */
import {
  hostedExperts,
  type PlacementPlan,
  type PlanBackend,
} from "../../../shared/placement_plan.ts";
import { type BackendBudget, slotsWithin } from "./budget_slots.ts";
import { backendLoads } from "./plan_math.ts";
import type { ModelShape, UnversionedPlan } from "./rebalancer.ts";

/** The two per-row costs the model needs (ms). */
export interface RowCosts {
  /** Device ms per routed-expert row executed. */
  expertRowMs: number;
  /** Ms per row crossing to a peer (`remote_row_cost.ts`). */
  remoteRowMs: number;
}

/** Predicted work of a plan under a load. */
export interface PlanCost {
  /** `[backends]`: execution + hop ms per second. */
  workMs: number[];
  /** `[backends]`: the hop part of `workMs`. */
  hopMs: number[];
  /** The busiest backend's `workMs`. */
  bottleneckMs: number;
  /** Mean ÷ max of `workMs` (1 when idle). */
  balancedness: number;
  /** Expert rows per second, and those that cross to a peer. */
  rowsPerS: number;
  remoteRowsPerS: number;
}

/** {@linkcode PlanCost} of `plan` under `loads` (`[layers][experts]` rows/s). */
export function planCost(
  plan: UnversionedPlan | PlacementPlan,
  loads: readonly (readonly number[])[],
  costs: RowCosts,
): PlanCost {
  const versioned = { version: 1, createdAt: 0, ...plan };
  const b = plan.backends.length;
  const workMs = new Array<number>(b).fill(0);
  const hopMs = new Array<number>(b).fill(0);
  // Step 1: execution — each host's replica share of its experts' rows.
  backendLoads(versioned, loads).forEach((layer) =>
    layer.forEach((rows, i) => workMs[i]! += rows * costs.expertRowMs)
  );
  // Step 2: hops — rows entering where their expert is not hosted.
  const hosted = plan.backends.map((backend) =>
    hostedExperts(versioned, backend.id).map((experts) => new Set(experts))
  );
  let rowsPerS = 0;
  let remoteRowsPerS = 0;
  loads.forEach((row, l) => {
    row.forEach((rows, expert) => {
      if (!(rows > 0)) return;
      rowsPerS += rows;
      for (let i = 0; i < b; i++) {
        if (hosted[i]![l]!.has(expert)) continue;
        const crossing = rows / b;
        remoteRowsPerS += crossing;
        hopMs[i]! += crossing * costs.remoteRowMs;
      }
    });
  });
  hopMs.forEach((ms, i) => workMs[i]! += ms);
  const bottleneckMs = Math.max(0, ...workMs);
  const mean = workMs.reduce((a, c) => a + c, 0) / Math.max(1, b);
  return {
    workMs,
    hopMs,
    bottleneckMs,
    balancedness: bottleneckMs > 0 ? Math.min(1, mean / bottleneckMs) : 1,
    rowsPerS,
    remoteRowsPerS,
  };
}

/** The full-replication plan: every backend hosts every expert of every layer once. */
export function fullReplicationPlan(
  model: ModelShape,
  backends: readonly PlanBackend[],
  reason: string,
): UnversionedPlan {
  const all = Array.from({ length: model.experts }, (_, e) => e);
  const phy2log = backends.flatMap(() => all);
  return {
    model: model.name,
    reason,
    backends: backends.map(({ id, url }) => ({ id, url })),
    slotsPerBackend: model.experts,
    layers: Array.from({ length: model.layers }, () => ({ phy2log: [...phy2log] })),
  };
}

/** Whether every backend of `plan` hosts every one of `experts` in every layer. */
export function isFullReplication(plan: UnversionedPlan | PlacementPlan, experts: number): boolean {
  if (plan.slotsPerBackend < experts) return false;
  const versioned = { version: 1, createdAt: 0, ...plan };
  return plan.backends.every((backend) =>
    hostedExperts(versioned, backend.id).every((layer) => layer.length === experts)
  );
}

/** Whether full replication fits every backend's budget, and why not. */
export type ReplicationFit =
  | { fits: true }
  /** `unknown`: backends whose budget no load report has stated yet. */
  | { fits: false; reason: string; unknown: string[] };

/**
 * Whether every backend can hold all `layers × experts` routed experts within its memory
 * budget (`budget_slots.ts`). A backend missing from `budgets` has not reported yet: its
 * budget is unknown, so full replication does not fit yet (`unknown` names them).
 */
export function fullReplicationFit(
  model: ModelShape,
  backends: readonly PlanBackend[],
  budgets: ReadonlyMap<string, BackendBudget>,
): ReplicationFit {
  const unknown = backends.filter((b) => !budgets.has(b.id)).map((b) => b.id);
  if (unknown.length > 0) {
    return {
      fits: false,
      reason: `the memory budget of ${unknown.join(", ")} is not known yet (no load report)`,
      unknown,
    };
  }
  for (const backend of backends) {
    const budget = budgets.get(backend.id)!;
    const slots = slotsWithin(budget, model.layers);
    if (slots >= model.experts) continue;
    const mib = (bytes: number) => (bytes / 1048576).toFixed(1);
    return {
      fits: false,
      reason: `the memory budget of ${backend.id} (${mib(budget.budgetBytes!)} MiB) holds ` +
        `${slots} of ${model.experts} experts per layer (${model.layers} layers × ` +
        `${mib(budget.expertBytes)} MiB each)`,
      unknown: [],
    };
  }
  return { fits: true };
}
