/**
 * @module Test helper: an EPLB metrics source over a real `RebalanceHealth` (three switch
 * attempts, one 1.5 s switch 60 s ago, 12 MiB moved, a rebalance held by adjust_interval
 * for 30 s) and a cost window with one round of hops (100 rows, 0.25 ms per remote row).
 */
import { RebalanceHealth } from "../../../router/control/balancer/rebalance_health.ts";
import { PlacementCostWindow } from "../../../router/control/load/cost_window.ts";
import { NO_PEER } from "../../../router/control/load/remote_row_cost.ts";
import type { EplbMetricsSource } from "../../../router/operate/metrics/eplb_metrics.ts";

const MIB = 1048576;

/** The source, its clock at `now` (router ms). */
export function eplbSource(now = 100_000): EplbMetricsSource {
  const health = new RebalanceHealth({ adjustIntervalMs: 60_000 });
  health.decided("switched", "balancer");
  health.decided("stage_failed", "balancer");
  health.decided("switched", "admin");
  health.switched(40_000, { experts: 12, bytes: 12 * MIB });
  health.activated(1500);
  health.evaluated(70_000, {
    due: true,
    reason: "adjust_interval",
    detail: "held",
    worst: 0.7,
    threshold: 0.93,
  });
  const costs = new PlacementCostWindow();
  costs.record({
    at: now,
    backends: [{
      id: "h:1",
      stale: false,
      utilisation: 0.5,
      slots: 1,
      expertLayers: [],
      peer: {
        at: now,
        delta: { ...NO_PEER, hops: 40, rowsSent: 100, hopMs: 300, exposedMs: 20, sendCpuMs: 5 },
      },
    }],
  });
  return {
    balancer: () => ({
      health: () => health.snapshot(now),
      switchDurationsSince: (cursor: number) => health.durationsSince(cursor),
      placement: () => null,
      modelShape: () => ({ name: "m", layers: 1, experts: 4, groups: 1 }),
    }),
    costs: () => costs,
    now: () => now,
  };
}
