/**
 * @module Router metrics about alerts and log shipping, read at scrape time: firing
 * alerts per kind (every kind listed, 0 when quiet), one series per firing alert, and
 * the log pipeline's shipped and dropped line counters.
 */
import type { Registry } from "prom-client";
import type { AlertKind, AlertSource } from "../alerts/alert_types.ts";
import {
  collectedCounter,
  collectedGauge,
  type Sample,
} from "../../../shared/metrics/collected.ts";

/** Every alert kind, so `switchyard_alerts_firing` has a 0 series for quiet kinds. */
export const ALERT_KINDS: readonly AlertKind[] = [
  "expert_hot",
  "balance_low",
  "backend_down",
  "latency_slo",
  "shedding",
  "saturation",
  "rebalance_stalled",
];

/** Log pipeline counters (`LogPipelineStats` of `shared/logging/service_logger.ts` fits). */
export interface LogShippingCounts {
  /** Lines the log store accepted since start. */
  shipped: number;
  /** Lines lost since start (buffer overflow, write or push refused). */
  dropped: number;
  /** Lines waiting to be written or pushed now. */
  buffered?: number;
  /** Failed push attempts since start. */
  failedPushes?: number;
}

/** Options of {@linkcode alertMetrics}. */
export interface AlertMetricsOptions {
  alerts?: AlertSource | undefined;
  logShipping?: (() => LogShippingCounts) | undefined;
}

/** Firing alerts per kind, every known kind included. */
export function alertsFiringSamples(source: AlertSource): Sample<"kind">[] {
  const counts = new Map<string, number>(ALERT_KINDS.map((kind) => [kind, 0]));
  for (const alert of source.active()) {
    if (alert.state !== "firing") continue;
    counts.set(alert.kind, (counts.get(alert.kind) ?? 0) + 1);
  }
  return [...counts].map(([kind, value]) => ({ labels: { kind }, value }));
}

/** One sample (value 1) per firing alert. */
export function alertFiringSamples(source: AlertSource): Sample<"kind" | "subject">[] {
  return source.active()
    .filter((alert) => alert.state === "firing")
    .map((alert) => ({ labels: { kind: alert.kind, subject: alert.subject }, value: 1 }));
}

/** Registers the alert and log-shipping metrics whose sources are present. */
export function alertMetrics(registry: Registry, options: AlertMetricsOptions): void {
  const { alerts, logShipping } = options;
  if (alerts !== undefined) {
    collectedGauge(registry, {
      name: "switchyard_alerts_firing",
      help: "Alerts firing now, by kind.",
      labelNames: ["kind"],
      read: () => alertsFiringSamples(alerts),
    });
    collectedGauge(registry, {
      name: "switchyard_alert_firing",
      help: "1 for each alert firing now; the subject names the backend, layer or expert.",
      labelNames: ["kind", "subject"],
      read: () => alertFiringSamples(alerts),
    });
  }
  if (logShipping !== undefined) {
    collectedCounter(registry, {
      name: "switchyard_log_lines_shipped_total",
      help: "Log lines the log pipeline delivered to its store since start.",
      read: () => [{ labels: {}, value: logShipping().shipped }],
    });
    collectedCounter(registry, {
      name: "switchyard_log_lines_dropped_total",
      help: "Log lines the log pipeline dropped (buffer full or delivery gave up) since start.",
      read: () => [{ labels: {}, value: logShipping().dropped }],
    });
    collectedGauge(registry, {
      name: "switchyard_log_lines_buffered",
      help: "Log lines waiting to be written or pushed now.",
      read: () => [{ labels: {}, value: logShipping().buffered ?? 0 }],
    });
    collectedCounter(registry, {
      name: "switchyard_log_push_failures_total",
      help: "Failed attempts to push log lines to Loki since start (each retried with backoff).",
      read: () => [{ labels: {}, value: logShipping().failedPushes ?? 0 }],
    });
  }
}
