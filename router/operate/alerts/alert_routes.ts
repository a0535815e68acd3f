/**
 * @module `GET /api/alerts` (read-only, public like `/api/load`): the alerts firing now
 * and the recent ones, newest first — `{active: [...], recent: [...]}`.
 */
import { Hono } from "hono";
import { alertJson } from "./alert_json.ts";
import type { AlertSource } from "./alert_types.ts";

/** The `/api/alerts` body. */
export function alertsApiBody(source: AlertSource) {
  return { active: source.active().map(alertJson), recent: source.recent().map(alertJson) };
}

/** `GET /api/alerts` as a Hono app, mounted with `app.route("/", …)`. */
export function alertRoutes(source: AlertSource): Hono {
  const app = new Hono();
  app.get("/api/alerts", (c) => c.json(alertsApiBody(source)));
  return app;
}
