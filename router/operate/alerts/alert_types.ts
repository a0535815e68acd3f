/**
 * @module The alert model shared by the alert evaluator, its API, the dashboard and the
 * metrics: what can alert, and the record of one alert.
 */

/** What an alert is about. */
export type AlertKind =
  /** An expert uses more than `alerts.expert_load_threshold` of the pool's capacity for it. */
  | "expert_hot"
  /** A layer's (or the pool's) balancedness is below `expert_balancer.threshold`. */
  | "balance_low"
  /** A configured backend fails its health checks or load reports. */
  | "backend_down"
  /** Request latency p99 over `alerts.latency_p99_ms`. */
  | "latency_slo"
  /** Backends refuse more than `alerts.shed_ratio` of requests. */
  | "shedding"
  /** The pool's saturation is at or above `alerts.saturation`. */
  | "saturation"
  /** A rebalance has been due for more than 3 × `adjust_interval` without a switch. */
  | "rebalance_stalled";

/** One alert, firing or resolved. */
export interface Alert {
  /** Stable per condition, e.g. `expert_hot:backend-1:L0/E3`. */
  id: string;
  kind: AlertKind;
  /** What it is about, e.g. `backend-1 L0/E3`, `demo-moe L1`, `backend-2`. */
  subject: string;
  state: "firing" | "resolved";
  /** Router clock ms when it fired. */
  firedAt: number;
  /** Router clock ms when it resolved; `undefined` while firing. */
  resolvedAt: number | undefined;
  /** The measured value when last evaluated (share, balancedness, or 0 for down). */
  value: number;
  /** The threshold it was compared with. */
  threshold: number;
  /** One human sentence: what, where, how much. */
  message: string;
}

/** Where alerts are read from (API, dashboard, metrics). */
export interface AlertSource {
  /** Alerts firing now. */
  active(): readonly Alert[];
  /** Recently resolved and firing alerts, newest first. */
  recent(): readonly Alert[];
}
