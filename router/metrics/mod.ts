/**
 * @module Prometheus metrics of the router (`GET /metrics`); see docs/METRICS.md.
 * `promtool_check.ts` (tests only) is left out on purpose: it spawns a process.
 */
export * from "./alert_metrics.ts";
export * from "../../shared/metrics/collected.ts";
export * from "./parse_exposition.ts";
export * from "./pool_metrics.ts";
export * from "./request_metrics.ts";
export * from "./router_metrics.ts";
