/**
 * @module Pure: Switchyard alerts in Prometheus Alertmanager's shapes.
 *
 * - Labels: `alertname` (`Switchyard` + the kind in PascalCase, e.g. `SwitchyardExpertHot`),
 *   `severity` (`critical` for a backend down, else `warning`), `service="switchyard"`,
 *   `alert_id` (the condition's stable id) and `subject`. Annotations: `summary` (the
 *   message), `value`, `threshold`.
 * - {@linkcode webhookV4}: the body Alertmanager's webhook receiver POSTs (`version "4"`,
 *   `groupKey`, `status`, `receiver`, `groupLabels`, `commonLabels`,
 *   `commonAnnotations`, `externalURL`, `truncatedAlerts`, `alerts[]` with `status`,
 *   `labels`, `annotations`, `startsAt`, `endsAt` — `0001-01-01T00:00:00Z` while firing —
 *   `generatorURL`, `fingerprint`). One group per `alertname`: its notification lists
 *   every alert of the group that fires now plus those that resolved in this evaluation,
 *   and is `firing` while any of them fires, as Alertmanager sends a group.
 * - {@linkcode postableAlerts}: the body of Alertmanager's `POST /api/v2/alerts`.
 * - {@linkcode fingerprint}: Prometheus' label-set fingerprint (FNV-1a 64 over the sorted
 *   names and values, each followed by the 0xff separator), 16 hex digits.
 */
import type { Alert, AlertKind } from "./alert_types.ts";

/** Alertmanager's "zero time" for an alert without an end. */
export const ZERO_TIME = "0001-01-01T00:00:00Z";
/** The receiver name in webhook bodies. */
export const RECEIVER = "switchyard";

/** `alertname` of a kind: `expert_hot` → `SwitchyardExpertHot`. */
export function alertName(kind: AlertKind | string): string {
  return "Switchyard" +
    kind.split("_").map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join("");
}

/** Alertmanager labels of `alert`. */
export function alertLabels(alert: Alert): Record<string, string> {
  return {
    alertname: alertName(alert.kind),
    alert_id: alert.id,
    service: "switchyard",
    severity: alert.kind === "backend_down" ? "critical" : "warning",
    subject: alert.subject,
  };
}

/** Alertmanager annotations of `alert`. */
export function alertAnnotations(alert: Alert): Record<string, string> {
  return {
    summary: alert.message,
    threshold: String(alert.threshold),
    value: String(Math.round(alert.value * 1000) / 1000),
  };
}

const OFFSET = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;

/** Prometheus' `LabelSet.Fingerprint()` as 16 hex digits. */
export function fingerprint(labels: Readonly<Record<string, string>>): string {
  let hash = OFFSET;
  const add = (text: string) => {
    for (const byte of new TextEncoder().encode(text)) {
      hash ^= BigInt(byte);
      hash = (hash * PRIME) & MASK;
    }
  };
  const separator = () => {
    hash ^= 0xffn;
    hash = (hash * PRIME) & MASK;
  };
  for (const name of Object.keys(labels).sort()) {
    add(name);
    separator();
    add(labels[name]!);
    separator();
  }
  return hash.toString(16).padStart(16, "0");
}

/** `{a="1", b="2"}` as Alertmanager writes label sets in group keys. */
function labelSetText(labels: Readonly<Record<string, string>>): string {
  return `{${
    Object.keys(labels).sort().map((name) => `${name}=${JSON.stringify(labels[name])}`).join(", ")
  }}`;
}

/** Where the alert can be seen (the router's dashboard). */
export interface PayloadContext {
  /** e.g. `http://localhost:8080/dashboard`. */
  externalUrl: string;
  /** Converts a router clock time (ms) to an RFC3339 time. */
  iso?: (ms: number) => string;
}

/** One alert of a webhook body. */
export interface WebhookAlert {
  status: "firing" | "resolved";
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
  fingerprint: string;
}

/** Alertmanager's webhook body (version 4). */
export interface WebhookV4 {
  version: "4";
  groupKey: string;
  truncatedAlerts: number;
  status: "firing" | "resolved";
  receiver: string;
  groupLabels: Record<string, string>;
  commonLabels: Record<string, string>;
  commonAnnotations: Record<string, string>;
  externalURL: string;
  alerts: WebhookAlert[];
}

const isoOf = (context: PayloadContext) =>
  context.iso ?? ((ms: number) => new Date(ms).toISOString());

function webhookAlert(alert: Alert, context: PayloadContext): WebhookAlert {
  const labels = alertLabels(alert);
  const iso = isoOf(context);
  return {
    status: alert.state,
    labels,
    annotations: alertAnnotations(alert),
    startsAt: iso(alert.firedAt),
    endsAt: alert.resolvedAt === undefined ? ZERO_TIME : iso(alert.resolvedAt),
    generatorURL: context.externalUrl,
    fingerprint: fingerprint(labels),
  };
}

/** Labels (or annotations) every map shares with the same value. */
function common(maps: readonly Record<string, string>[]): Record<string, string> {
  const [first, ...rest] = maps;
  if (first === undefined) return {};
  return Object.fromEntries(
    Object.entries(first).filter(([name, value]) => rest.every((map) => map[name] === value)),
  );
}

/**
 * The webhook bodies of one evaluation: one per `alertname` that fired or resolved
 * something in it, each listing that group's firing alerts and its resolutions of now.
 */
export function webhookV4(
  active: readonly Alert[],
  changed: readonly Alert[],
  context: PayloadContext,
): WebhookV4[] {
  const groups = new Map<string, Alert[]>();
  for (const alert of changed) groups.set(alertName(alert.kind), []);
  for (const alert of [...active, ...changed.filter((a) => a.state === "resolved")]) {
    groups.get(alertName(alert.kind))?.push(alert);
  }
  return [...groups].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, alerts]) => {
    const unique = [...new Map(alerts.map((a) => [`${a.id}@${a.firedAt}`, a])).values()]
      .sort((a, b) => a.firedAt - b.firedAt || a.id.localeCompare(b.id));
    const items = unique.map((alert) => webhookAlert(alert, context));
    const groupLabels = { alertname: name };
    return {
      version: "4",
      groupKey: `{}:${labelSetText(groupLabels)}`,
      truncatedAlerts: 0,
      status: items.some((item) => item.status === "firing") ? "firing" : "resolved",
      receiver: RECEIVER,
      groupLabels,
      commonLabels: common(items.map((item) => item.labels)),
      commonAnnotations: common(items.map((item) => item.annotations)),
      externalURL: context.externalUrl,
      alerts: items,
    };
  });
}

/** One alert of `POST /api/v2/alerts` (Alertmanager's `postableAlert`). */
export interface PostableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt?: string;
  generatorURL: string;
}

/**
 * The `POST /api/v2/alerts` body: firing alerts without `endsAt` (Alertmanager keeps
 * them for its `resolve_timeout` unless sent again) and resolved ones with theirs.
 */
export function postableAlerts(alerts: readonly Alert[], context: PayloadContext): PostableAlert[] {
  const iso = isoOf(context);
  return alerts.map((alert) => ({
    labels: alertLabels(alert),
    annotations: alertAnnotations(alert),
    startsAt: iso(alert.firedAt),
    ...(alert.resolvedAt !== undefined ? { endsAt: iso(alert.resolvedAt) } : {}),
    generatorURL: context.externalUrl,
  }));
}
