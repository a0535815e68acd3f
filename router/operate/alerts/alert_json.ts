/**
 * @module An alert in the router's snake_case JSON style, as `GET /api/alerts`, the
 * webhook and the KV record carry it.
 */
import type { Alert } from "./alert_types.ts";

/** `alert` as JSON: times in router clock ms, `resolved_at` null while firing. */
export function alertJson(alert: Alert) {
  return {
    id: alert.id,
    kind: alert.kind,
    subject: alert.subject,
    state: alert.state,
    fired_at: alert.firedAt,
    resolved_at: alert.resolvedAt ?? null,
    value: Math.round(alert.value * 1000) / 1000,
    threshold: alert.threshold,
    message: alert.message,
  };
}

/** The JSON form of one alert. */
export type AlertJson = ReturnType<typeof alertJson>;
