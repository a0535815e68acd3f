/**
 * @module Router metrics of the pre-warm job's capacity contracts, read at scrape time:
 * the desired backend count (what an HPA on an external metric reads through
 * prometheus-adapter), members by role, requests pending, the lead time and the measured
 * cold starts it comes from, and deadlines at risk or missed.
 */
import type { Registry } from "prom-client";
import { collectedCounter, collectedGauge } from "../../../shared/metrics/collected.ts";
import type { PrewarmJob } from "../../control/prewarm/prewarm_job.ts";
import { nearestRank } from "../../control/prewarm/lead_time.ts";
import { coldStartMs } from "../../control/prewarm/lead_time.ts";

/** What the gauges read (`PrewarmJob` fits). */
export type PrewarmCapacitySource = Pick<
  PrewarmJob,
  "desired" | "members" | "lead" | "coldStarts" | "contract" | "missed"
>;

/** Registers the capacity gauges; `source()` undefined: no samples. */
export function prewarmMetrics(
  registry: Registry,
  source: () => PrewarmCapacitySource | undefined,
): void {
  const one = (read: (s: PrewarmCapacitySource) => number | null) => () => {
    const s = source();
    const value = s === undefined ? null : read(s);
    return value === null ? [] : [{ labels: {}, value }];
  };
  collectedGauge(registry, {
    name: "switchyard_prewarm_desired_backends",
    help: "Backends the pre-warm job wants (what the scaler was last asked for; KEDA/HPA read it).",
    read: one((s) => s.desired()),
  });
  collectedGauge(registry, {
    name: "switchyard_prewarm_backends",
    help: "Pool members by role (active, standby: started ahead of a peak, draining), and " +
      "requested backends not ready yet (pending).",
    labelNames: ["state"],
    read: () => {
      const m = source()?.members();
      if (m === undefined) return [];
      return (["active", "standby", "draining", "pending"] as const).map((state) => ({
        labels: { state },
        value: m[state],
      }));
    },
  });
  collectedGauge(registry, {
    name: "switchyard_prewarm_lead_seconds",
    help: "Lead time the job plans scale-ups with: the measured cold-start percentile × " +
      "(1 + margin) + one run, else prewarm.lead_time.",
    read: one((s) => s.lead().leadMs / 1000),
  });
  collectedGauge(registry, {
    name: "switchyard_prewarm_cold_start_seconds",
    help: "Measured backend cold start (scale request → ready, plus expert load) at a quantile.",
    labelNames: ["quantile"],
    read: () => {
      const samples = source()?.coldStarts() ?? [];
      if (samples.length === 0) return [];
      const sorted = samples.map(coldStartMs).sort((a, b) => a - b);
      return [0.5, 0.95].map((q) => ({
        labels: { quantile: String(q) },
        value: nearestRank(sorted, q) / 1000,
      }));
    },
  });
  collectedGauge(registry, {
    name: "switchyard_prewarm_contract_at_risk",
    help: "1 while the open capacity contract will miss (or missed) its deadline.",
    read: one((s) => {
      const status = s.contract()?.status;
      return status === "at_risk" || status === "missed" ? 1 : 0;
    }),
  });
  collectedCounter(registry, {
    name: "switchyard_prewarm_deadlines_missed_total",
    help: "Capacity contracts whose deadline passed short of their target.",
    read: one((s) => s.missed),
  });
}
