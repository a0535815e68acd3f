/**
 * @module `GET /api/alerts` (read-only, public like `/api/load`): the alerts firing now
 * and the recent ones, newest first — `{active: [...], recent: [...]}`.
 */
import type { Env, Hono } from "hono";
import { alertJson } from "./alert_json.ts";
import type { AlertSource } from "./alert_types.ts";

/** The `/api/alerts` body. */
export function alertsApiBody(source: AlertSource) {
  return { active: source.active().map(alertJson), recent: source.recent().map(alertJson) };
}

/** Registers `GET /api/alerts` on `app`. */
export function registerAlertRoutes<E extends Env>(app: Hono<E>, source: AlertSource): void {
  app.get("/api/alerts", (c) => c.json(alertsApiBody(source)));
}
