/**
 * @module Router request metrics, fed by an {@linkcode InferenceObserver}: a counter and
 * a latency histogram by model and status code. The hot path only increments a counter
 * and observes one histogram value.
 *
 * The model label comes from the request path, which a client controls: names the pool
 * does not serve are counted as `(unknown)`, so probing random names cannot grow the
 * number of series.
 */
import { Counter, Histogram, type Registry } from "prom-client";
import type { InferenceObserver } from "../../serve/observe/inference_event.ts";

/** Model label of requests for a model no backend serves. */
export const UNKNOWN_MODEL = "(unknown)";

/** Latency buckets in seconds: 1 ms … 30 s (the default request timeout). */
export const LATENCY_BUCKETS_S = [
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  30,
];

/** Options of {@linkcode requestMetrics}. */
export interface RequestMetricsOptions {
  /** Whether `model` is served by the pool (other names count as `(unknown)`). */
  knownModel: (model: string) => boolean;
}

/** Registers the request metrics on `registry`; returns the observer that feeds them. */
export function requestMetrics(
  registry: Registry,
  options: RequestMetricsOptions,
): InferenceObserver {
  const requests = new Counter({
    name: "switchyard_router_requests_total",
    help: "Inference requests the router answered, by model and HTTP status code.",
    labelNames: ["model", "code"],
    registers: [registry],
  });
  const latency = new Histogram({
    name: "switchyard_router_request_duration_seconds",
    help: "Router-side latency of inference requests in seconds, by model and HTTP status code.",
    labelNames: ["model", "code"],
    buckets: LATENCY_BUCKETS_S,
    registers: [registry],
  });
  return (event) => {
    const labels = {
      model: options.knownModel(event.model) ? event.model : UNKNOWN_MODEL,
      code: String(event.status),
    };
    requests.inc(labels);
    latency.observe(labels, event.ms / 1000);
  };
}
