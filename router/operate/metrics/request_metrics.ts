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
import { ROUTER_PHASES } from "../../serve/observe/router_phases.ts";

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

/** Phase buckets in seconds: 50 µs … 30 s (a router's own part is sub-millisecond). */
export const PHASE_BUCKETS_S = [0.00005, 0.0001, 0.00025, 0.0005, ...LATENCY_BUCKETS_S];

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
  const phases = new Histogram({
    name: "switchyard_router_request_phase_seconds",
    help: "Where answered inference requests spent their time, by phase: router (its own " +
      "part, failed attempts included), net (the answering attempt beyond the backend's " +
      "own time), backend (as the backend's Server-Timing says), total.",
    labelNames: ["phase"],
    buckets: PHASE_BUCKETS_S,
    registers: [registry],
  });
  const phase = Object.fromEntries(ROUTER_PHASES.map((p) => [p, phases.labels({ phase: p })]));
  return (event) => {
    const labels = {
      model: options.knownModel(event.model) ? event.model : UNKNOWN_MODEL,
      code: String(event.status),
    };
    requests.inc(labels);
    latency.observe(labels, event.ms / 1000);
    if (event.phases) {
      for (const p of ROUTER_PHASES) phase[p]!.observe(event.phases[p] / 1000);
    }
  };
}
