/**
 * @module The `rebalance_stalled` rule, pure: a rebalance has been due — the current plan's
 * worst layer below `expert_balancer.threshold` — for longer than `STALL_INTERVALS` ×
 * `adjust_interval` without a switch (`control/balancer/rebalance_health.ts` judges it every
 * balancer evaluation). The message says why it is held. The Prometheus rule
 * `SwitchyardRebalanceStalled` (deploy/prometheus) fires on the same metric.
 */
import type { HealthSnapshot } from "../../control/balancer/rebalance_health.ts";
import type { DueReason } from "../../control/balancer/rebalance_health.ts";
import type { AlertCondition } from "./alert_conditions.ts";

/** What the rule reads: the served model and the balancer's health. */
export interface RebalanceReading {
  model: string;
  health: HealthSnapshot;
  /**
   * Whether the placement in force replicates every expert on every backend: then the
   * backends' shares of expert work follow entry routing, which no placement can change
   * (`balance_low` does not apply).
   */
  fullReplication?: boolean;
}

/** Why a due rebalance is held, in words. */
const HELD_BY: Record<DueReason, string> = {
  confirming: "still confirming below the threshold",
  adjust_interval: "held by adjust_interval",
  pinned: "the plan is pinned",
  no_better_plan: "the planner finds no better placement",
  planning_failed: "planning failed",
  staging_failed: "staging failed",
  conflict: "another router or an admin switched first",
  error: "the balancer failed",
};

/** The condition when a due rebalance is stalled; none otherwise. */
export function rebalanceStalled(reading: RebalanceReading | undefined): AlertCondition[] {
  const due = reading?.health.due;
  if (reading === undefined || due === null || due === undefined || !due.stalled) return [];
  const threshold = reading.health.stallAfterMs / 1000;
  const minutes = (due.seconds / 60).toFixed(1);
  return [{
    id: `rebalance_stalled:${reading.model}`,
    kind: "rebalance_stalled",
    subject: reading.model,
    value: due.seconds,
    threshold,
    message: `A rebalance of ${reading.model} has been due for ${minutes} min (worst layer ` +
      `${due.worst.toFixed(3)} < threshold ${due.threshold}) but is not happening: ` +
      `${HELD_BY[due.reason]} (${due.detail})`,
  }];
}
