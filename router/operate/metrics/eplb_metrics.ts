/**
 * @module EPLB health as router metrics, read at scrape time (docs/METRICS.md, "EPLB
 * health"): plan switches by outcome and their duration (decision → every backend
 * active), time since the last one, expert weights they loaded, a rebalance due but held
 * (and why), the pool's rows and seconds in peer hops with the remote-row cost the planner
 * weighs, and the placement kind chosen. The balancer runs on the leader: followers export
 * the hop counters, and the rest once they lead.
 */
import { Histogram, type Registry } from "prom-client";
import type { Balancer } from "../../control/balancer/balancer.ts";
import type { PlacementCostWindow } from "../../control/load/cost_window.ts";
import { collectedCounter, collectedGauge } from "../../../shared/metrics/collected.ts";

/** Buckets of `switchyard_eplb_rebalance_duration_seconds`: staging takes ms to minutes. */
export const SWITCH_DURATION_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** Where the EPLB metrics read from; either may be absent (no KV: no balancer). */
export interface EplbMetricsSource {
  balancer: () =>
    | Pick<Balancer, "health" | "switchDurationsSince" | "placement" | "modelShape">
    | undefined;
  costs: () => Pick<PlacementCostWindow, "totals" | "estimates"> | undefined;
  /** Router clock ms (the cost estimates' age). */
  now: () => number;
}

/** Parts of `switchyard_eplb_hop_seconds_total`, from the backends' peer counters. */
const HOP_PARTS = [
  ["wall", "hopMs"],
  ["exposed", "exposedMs"],
  ["covered", "coveredMs"],
  ["peer_serve", "peerServeMs"],
  ["send_cpu", "sendCpuMs"],
  ["serve_cpu", "serveCpuMs"],
] as const;

/** Registers the EPLB health metrics on `registry`. */
export function eplbMetrics(registry: Registry, source: EplbMetricsSource): void {
  switchMetrics(registry, source);
  heldMetrics(registry, source);
  hopMetrics(registry, source);
}

/** Plan switches: by outcome, their durations, time since the last, weights they loaded. */
function switchMetrics(registry: Registry, source: EplbMetricsSource): void {
  const health = () => source.balancer()?.health();
  collectedCounter(registry, {
    name: "switchyard_eplb_rebalances_total",
    help: "Plan switches the balancer attempted (its own, the pre-warm job's, an admin's), " +
      "by outcome (switched, activate_partial, stage_failed, conflict, adopted, error) and " +
      "trigger (balancer, prewarm, admin).",
    labelNames: ["outcome", "trigger"],
    read: () =>
      (health()?.outcomes ?? []).map((o) => ({
        labels: { outcome: o.outcome, trigger: o.trigger },
        value: o.count,
      })),
  });
  let cursor = 0;
  new Histogram({
    name: "switchyard_eplb_rebalance_duration_seconds",
    help: "Plan switches from the decision to every backend running the new plan (staging, " +
      "claim, activation, retries of backends that missed it).",
    buckets: SWITCH_DURATION_BUCKETS_S,
    registers: [registry],
    collect() {
      const balancer = source.balancer();
      if (balancer === undefined) return;
      const fresh = balancer.switchDurationsSince(cursor);
      cursor = fresh.cursor;
      for (const seconds of fresh.values) this.observe(seconds);
    },
  });
  collectedGauge(registry, {
    name: "switchyard_eplb_seconds_since_rebalance",
    help: "Seconds since the last plan switch became current (absent before the first).",
    labelNames: ["model"],
    read: () => {
      const balancer = source.balancer();
      const snapshot = balancer?.health();
      const model = balancer?.modelShape()?.name;
      if (snapshot === undefined || snapshot.lastSwitchAt === null || model === undefined) {
        return [];
      }
      return [{ labels: { model }, value: (snapshot.at - snapshot.lastSwitchAt) / 1000 }];
    },
  });
  collectedCounter(registry, {
    name: "switchyard_eplb_moved_experts_total",
    help: "Expert hostings (layer, backend, expert) plan switches made backends load.",
    read: () => [{ labels: {}, value: health()?.moved.experts ?? 0 }],
  });
  collectedCounter(registry, {
    name: "switchyard_eplb_moved_bytes_total",
    help: "Bytes of expert weights plan switches made backends load (each backend's " +
      "reported expert size).",
    read: () => [{ labels: {}, value: health()?.moved.bytes ?? 0 }],
  });
}

/** A rebalance due but held (and why), the adjust interval, the placement kind chosen. */
function heldMetrics(registry: Registry, source: EplbMetricsSource): void {
  const health = () => source.balancer()?.health();
  collectedGauge(registry, {
    name: "switchyard_eplb_rebalance_due_seconds",
    help: "Seconds a rebalance has been due (worst layer below expert_balancer.threshold) " +
      "without a switch, by why it is held: confirming, adjust_interval, pinned, " +
      "no_better_plan, planning_failed, staging_failed, conflict, error. Absent when none is due.",
    labelNames: ["reason"],
    read: () => {
      const due = health()?.due;
      return due === undefined || due === null
        ? []
        : [{ labels: { reason: due.reason }, value: due.seconds }];
    },
  });
  collectedGauge(registry, {
    name: "switchyard_eplb_adjust_interval_seconds",
    help: "expert_balancer.adjust_interval: at most one switch per interval (the stall " +
      "alert fires after 3 of them).",
    read: () => {
      const snapshot = health();
      return snapshot === undefined
        ? []
        : [{ labels: {}, value: snapshot.adjustIntervalMs / 1000 }];
    },
  });
  collectedGauge(registry, {
    name: "switchyard_eplb_placement_info",
    help: "1 for the placement kind the balancer's last evaluation chose: full_replication " +
      "(every backend hosts every expert) or expert_parallel.",
    labelNames: ["placement"],
    read: () => {
      const placement = source.balancer()?.placement();
      return placement === undefined || placement === null
        ? []
        : [{ labels: { placement: placement.choice }, value: 1 }];
    },
  });
}

/** The pool's rows and seconds in peer hops, and the remote-row cost the planner weighs. */
function hopMetrics(registry: Registry, source: EplbMetricsSource): void {
  // From every backend's peer counters (each report interval once).
  collectedCounter(registry, {
    name: "switchyard_eplb_hops_total",
    help: "Request layers whose rows crossed to a peer backend, pool-wide (since this router " +
      "started).",
    read: () => [{ labels: {}, value: source.costs()?.totals().hops ?? 0 }],
  });
  collectedCounter(registry, {
    name: "switchyard_eplb_hop_rows_total",
    help: "Rows sent to peer backends, pool-wide (a token once per peer per layer).",
    read: () => [{ labels: {}, value: source.costs()?.totals().rowsSent ?? 0 }],
  });
  collectedCounter(registry, {
    name: "switchyard_eplb_hop_seconds_total",
    help: "Seconds spent in peer hops, pool-wide, by part: wall (send → last answer), exposed " +
      "(requests waited with none of their own work running), covered (the executor ran " +
      "something meanwhile), peer_serve (the peers' serving time), send_cpu and serve_cpu " +
      "(host-thread time on the entry and the peer side).",
    labelNames: ["part"],
    read: () => {
      const totals = source.costs()?.totals();
      return HOP_PARTS.map(([part, field]) => ({
        labels: { part },
        value: (totals?.[field] ?? 0) / 1000,
      }));
    },
  });
  collectedGauge(registry, {
    name: "switchyard_eplb_remote_row_cost_seconds",
    help: "The cost of a row crossing to a peer the placement planner weighs (exposed hop " +
      "time beyond the peers' serving + both sides' host CPU, per row), by source: measured, " +
      "or assumed before any.",
    labelNames: ["source"],
    read: () => {
      const costs = source.costs();
      if (costs === undefined) return [];
      const row = costs.estimates(source.now()).remoteRow;
      return [{ labels: { source: row.source }, value: row.ms / 1000 }];
    },
  });
}
