/**
 * @module `GET /metrics` (Prometheus text; read-only, no secrets, still meant for the
 * monitoring network, not the internet). See docs/METRICS.md.
 */
import { Hono } from "hono";
import type { MetricsEndpoint } from "./router_metrics.ts";

/** The metrics endpoint as a Hono app, mounted on the router's app with `app.route("/", …)`. */
export function metricsRoutes(metrics: MetricsEndpoint): Hono {
  const app = new Hono();
  app.get(
    "/metrics",
    async (c) => c.body(await metrics.render(), 200, { "content-type": metrics.contentType }),
  );
  return app;
}
