/**
 * @module Step 4 of wiring a router: the request path — the entry policy over the
 * collector's load, the observers of finished requests (request log, metrics, request
 * window, traffic recorder; their failures counted by kind), the inference hop's client and
 * the Hono app.
 */
import { InputFaults } from "../../shared/input_faults.ts";
import type { LogPipelineStats } from "../../shared/logging/service_logger.ts";
import type { PoolLoad } from "../control/load/pool_load.ts";
import type { RouterMetrics } from "../operate/metrics/router_metrics.ts";
import { ObserverFailures } from "../operate/requests/observer_failures.ts";
import { requestLogObserver } from "../operate/requests/request_log.ts";
import { createApp } from "../serve/app.ts";
import { createPolicy } from "../serve/entry/create_policy.ts";
import type { FrontCounts } from "../serve/front/node_server.ts";
import { backendFetch } from "../serve/forward/backend_fetch.ts";
import type { InferenceObserver } from "../serve/observe/inference_event.ts";
import type { FetchLike } from "../runtime/fetch_like.ts";
import type { LoadRounds } from "./load_rounds.ts";
import type { RouterCore } from "./router_core.ts";
import { createRouterMetrics } from "./router_metrics_wiring.ts";
import type { RouterObservation } from "./router_observation.ts";

/** What {@linkcode wireServing} is given besides the earlier steps. */
export interface RouterServingOptions {
  /** Random source of randomised policies; default `Math.random`. */
  random?: (() => number) | undefined;
  /** Counters of the log pipeline, for the log metrics. */
  logShipping?: (() => LogPipelineStats) | undefined;
  /** An injected fetch for the inference hop (tests); default `router.backend_protocol`'s. */
  fetch?: FetchLike | undefined;
}

/** The app and what serves and measures its requests. */
export interface RouterServing {
  app: ReturnType<typeof createApp>;
  /** The collector's latest load. */
  loadNow: () => PoolLoad;
  metrics: RouterMetrics;
  /** Set when a `node` front serves the app. */
  connections: { read?: () => FrontCounts };
  /** The inference hop's client. */
  hop: { close(): void };
}

/** Creates the app of the router made of the earlier steps. */
export function wireServing(
  core: RouterCore,
  parts: { observed: RouterObservation; rounds: LoadRounds },
  options: RouterServingOptions,
): RouterServing {
  const { config, pool, logger } = core;
  const { observed, rounds } = parts;
  const policy = createPolicy(config.router.policy, {
    ...(options.random ? { random: options.random } : {}),
    loadOf: (id) => rounds.collector.loadOf(id),
  });
  const loadNow = () => rounds.collector.snapshot();
  // Clients that vanish mid-body or send too slowly: counted, never logged as errors.
  const inputFaults = new InputFaults();
  // Observer failures: counted by kind, the first of each kind logged.
  const observerFailures = new ObserverFailures(logger);
  observerFailures.declare("describe");
  // Set by `startRouter` when a `node` front serves the app.
  const connections: RouterServing["connections"] = {};
  // `/metrics`: everything but the request counters is read when Prometheus scrapes.
  const metrics = createRouterMetrics({
    state: core.state,
    pool,
    load: loadNow,
    alerts: observed.alerts,
    fleet: core.fleet,
    guards: core.guards,
    lag: core.lag,
    inputFaults,
    observerFailures,
    connections,
    logShipping: options.logShipping,
    late: core.late,
    clock: core.clock,
  });
  const guard = (kind: string, observer: InferenceObserver) =>
    observerFailures.guard(kind, observer);
  const observers = [
    ...(config.log.requests ? [guard("request_log", requestLogObserver(logger))] : []),
    guard("metrics", metrics.observer),
    guard("request_window", observed.requests.observe),
    ...observed.series.observers.map((observer) => guard("traffic_recorder", observer)),
  ];
  // The inference hop's client (`router.backend_protocol`); injected fetches win (tests).
  const hop = options.fetch
    ? { fetch: options.fetch, close: () => {} }
    : backendFetch(config.router.backend_protocol);
  const app = createApp({
    config,
    pool,
    policy,
    logger,
    fetch: hop.fetch,
    clock: core.clock,
    observers,
    inputFaults,
    guards: core.guards,
    onObserverError: (kind, error) => observerFailures.record(kind, error),
    state: () => core.stateHealth.check(),
  });
  core.late.app = app;
  return { app, loadNow, metrics, connections, hop };
}
