/** @module Prometheus metrics of a backend (`GET /metrics`); see docs/METRICS.md. */
export * from "./backend_metrics.ts";
export * from "./batch_distributions.ts";
export * from "./routed_token_samples.ts";
export * from "./scrape_histogram.ts";
