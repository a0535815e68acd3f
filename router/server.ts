/**
 * @module Runs the router in-process: opens the state KV, builds the pool, the load
 * collector, the routing policy and the app, and wires the features that ride on them —
 * time series (`startup/series.ts`), placement and pre-warming (`startup/balancing.ts`),
 * metrics, alerts, and the operator API and dashboard (`startup/operator_api.ts`) — then
 * serves with `Deno.serve` (HTTPS when a cert/key pair is configured). `main.ts` uses
 * it; so can tests and the local launcher.
 */
import type { Config } from "../shared/config.ts";
import { createJsonLogger, type Logger } from "../shared/logger.ts";
import type { LogPipelineStats } from "../shared/logging/service_logger.ts";
import { ROUTER_VERSION } from "../shared/version.ts";
import { AlertManager, alertSettingsFromConfig, AlertStore } from "./alerts/mod.ts";
import { createApp } from "./app.ts";
import type { Balancer } from "./balancer/balancer.ts";
import { LoadTimeline } from "./dashboard/load_timeline.ts";
import { UtilisationWindow } from "./doctor/utilisation_window.ts";
import { LoadCollector } from "./load/load_collector.ts";
import { RouterMetrics } from "./metrics/router_metrics.ts";
import { requestLogObserver } from "./observe/request_log.ts";
import { RequestWindow } from "./observe/request_window.ts";
import { BackendPool } from "./pool/backend_pool.ts";
import { createPolicy } from "./routing/create_policy.ts";
import { type Clock, systemClock } from "./runtime/clock.ts";
import type { FetchLike } from "./runtime/fetch_like.ts";
import { type Balancing, wireBalancing } from "./startup/balancing.ts";
import { registerOperatorApi } from "./startup/operator_api.ts";
import { createRouterSeries } from "./startup/series.ts";
import { openStateKv } from "./startup/state_kv.ts";
import { publicHost, readTls } from "./startup/tls.ts";

/** Options of {@linkcode startRouter}; every field has a real default. */
export interface StartRouterOptions {
  /** Default: the global `fetch`. */
  fetch?: FetchLike;
  /** Default: {@linkcode systemClock}. */
  clock?: Clock;
  /** Default: JSON lines on stdout at `log.level`. */
  logger?: Logger;
  /** Counters of the log pipeline (`createServiceLogger().stats`), for the log metrics. */
  logShipping?: () => LogPipelineStats;
  /** Random source of randomised policies; default `Math.random`. */
  random?: () => number;
  /**
   * KV store for shared state such as the load history (the caller closes it). Default:
   * `state.kv` opened and closed with the router; if it cannot be opened, the router
   * logs a warning and runs without history.
   */
  kv?: Deno.Kv;
  /** Time between load-report rounds; default 1000 ms. */
  loadIntervalMs?: number;
}

/** A running router. */
export interface RunningRouter {
  /** Base URL clients use, e.g. `https://localhost:8443` (wildcard hosts shown as localhost). */
  url: string;
  /** The pool, for launchers and tests that want to watch backend health. */
  pool: BackendPool;
  /** The load collector (`GET /api/load`), for tests and tools. */
  load: LoadCollector;
  /** Alerts (`GET /api/alerts`): firing and recent, for metrics and tools. */
  alerts: AlertManager;
  /** The balancer, when Deno KV is available (plans live there). */
  balancer: Balancer | undefined;
  /** Stops health checks and shuts the server down gracefully (idempotent). */
  close(): Promise<void>;
  /** Settles when the server has stopped. */
  finished: Promise<void>;
}

/** Starts the router described by `config`; resolves once it listens. */
export async function startRouter(
  config: Config,
  options: StartRouterOptions = {},
): Promise<RunningRouter> {
  const logger = options.logger ??
    createJsonLogger({ level: config.log.level, base: { service: "router" } });
  const clock = options.clock ?? systemClock;
  const fetch = options.fetch ?? globalThis.fetch;
  const tls = await readTls(config);
  const pool = BackendPool.fromConfig(config, { fetch, clock, logger });
  const state = await openStateKv(config, options.kv, logger);
  const loadIntervalMs = options.loadIntervalMs ?? 1000;
  const series = createRouterSeries(state?.kv, config, { clock, logger, loadIntervalMs });
  // The dashboard's recent minutes and the doctor's utilisation, fed by every round.
  const timeline = new LoadTimeline();
  const utilisation = new UtilisationWindow();
  // Alert rules over every round; KV records and webhook POSTs never block the round.
  const alerts = new AlertManager({
    settings: alertSettingsFromConfig(config),
    views: () => pool.views(),
    clock,
    logger,
    store: state && new AlertStore(state.kv, { logger }),
    ...(config.alerts.webhook ? { webhook: { url: config.alerts.webhook, fetch } } : {}),
  });
  // Assigned once the app exists (it registers routes); rounds and metrics use it then.
  // deno-lint-ignore prefer-const
  let balancing: Balancing | undefined;
  const collector = new LoadCollector(pool, {
    fetch,
    clock,
    logger,
    internalToken: config.auth.internal_token,
    intervalMs: loadIntervalMs,
    onRound: async (load) => {
      alerts.onRound(load);
      timeline.record(load);
      utilisation.record(load);
      await series.recordRound(load);
      await balancing?.onRound(load);
    },
  });
  const policy = createPolicy(config.router.policy, {
    ...(options.random ? { random: options.random } : {}),
    loadOf: (id) => collector.loadOf(id),
  });
  const loadNow = () => collector.snapshot();
  // `/metrics`: everything but the request counters is read when Prometheus scrapes.
  const metrics = new RouterMetrics({
    version: ROUTER_VERSION,
    views: () => pool.views(),
    knownModel: (model) => pool.model(model) !== undefined,
    load: loadNow,
    plans: state && {
      models: () => [...pool.catalog().keys()],
      currentVersion: (model) => balancing?.store.currentVersion(model) ?? Promise.resolve(null),
    },
    alerts,
    logShipping: options.logShipping,
  });
  // The doctor's latency variation and token rate through this router.
  const requests = new RequestWindow();
  const observers = [
    ...(config.log.requests ? [requestLogObserver(logger)] : []),
    metrics.observer,
    requests.observe,
    ...series.observers,
  ];
  const app = createApp({
    config,
    pool,
    policy,
    logger,
    fetch,
    clock,
    load: { snapshot: loadNow, ewma: (model, layer) => series.history?.ewma(model, layer) },
    observers,
    metrics,
  });
  balancing = state && wireBalancing(app, config, {
    kv: state.kv,
    pool,
    load: loadNow,
    history: series.history,
    events: series.events,
    fetch,
    clock,
    logger,
  });
  const operatorApi = registerOperatorApi(app, config, {
    kv: state?.kv,
    pool,
    load: loadNow,
    series,
    balancer: balancing?.balancer,
    alerts,
    timeline,
    requests,
    utilisation,
    fetch,
    clock,
    logger,
  });
  const stopAll = async () => {
    await operatorApi.close();
    await balancing?.stop();
    await collector.stop();
    await alerts.settled();
    await series.close();
    await pool.stop();
    if (state?.owned) state.kv.close();
  };
  await pool.start();
  void collector.start();
  series.start();
  balancing?.start();
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: config.router.host,
      port: config.router.port,
      ...(tls ?? {}),
      onListen: () => {},
    }, app.fetch);
  } catch (error) {
    await stopAll();
    throw error;
  }
  const url = `${tls ? "https" : "http"}://${publicHost(config.router.host)}:${server.addr.port}`;
  logger.info("router listening", {
    event: "start",
    url,
    tls: tls !== undefined,
    policy: policy.name,
    backends: config.router.backends.length,
  });
  let closing: Promise<void> | undefined;
  return {
    url,
    pool,
    load: collector,
    alerts,
    balancer: balancing?.balancer,
    finished: server.finished,
    close: () =>
      closing ??= (async () => {
        await stopAll();
        await server.shutdown();
        logger.info("router stopped", { event: "stop", url });
      })(),
  };
}
