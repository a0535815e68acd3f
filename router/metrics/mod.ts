/**
 * @module Prometheus metrics of the router (`GET /metrics`); see docs/METRICS.md.
 */
export * from "./alert_metrics.ts";
export * from "./pool_metrics.ts";
export * from "./request_metrics.ts";
export * from "./router_metrics.ts";
