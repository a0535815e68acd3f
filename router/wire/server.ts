/**
 * @module Runs the router in-process. `buildRouter` wires it in five steps: the pool,
 * guards, state KV and fleet (`router_core.ts`); time series, the dashboard's windows and
 * alerts (`router_observation.ts`); the load collector's rounds (`load_rounds.ts`); the
 * routing policy, metrics and the app (`router_serving.ts`); the routes of the features
 * that ride on them — placement and pre-warming (`balancing.ts`), the load API, `/metrics`,
 * the operator API and dashboard (`router_routes.ts`) — and `router_lifecycle.ts` starts
 * and stops them. `startRouter` then serves on `node:http` (`router/serve/front/`:
 * connection cap, header timeout) or `Deno.serve` (`router.http_server`), HTTPS when a
 * cert/key pair is configured. `router/main.ts` uses it; so can tests and the local
 * launcher.
 */
import type { RouterConfig } from "../../shared/config.ts";
import { createJsonLogger, type Logger } from "../../shared/logger.ts";
import type { LogPipelineStats } from "../../shared/logging/service_logger.ts";
import type { AlertManager } from "../operate/alerts/mod.ts";
import type { Balancer } from "../control/balancer/balancer.ts";
import type { LoadCollector } from "../control/load/load_collector.ts";
import type { BackendPool } from "../serve/pool/backend_pool.ts";
import { type Clock, systemClock } from "../runtime/clock.ts";
import type { FetchLike } from "../runtime/fetch_like.ts";
import type { AssetSource } from "../operate/dashboard/static_assets.ts";
import type { Fleet } from "./fleet.ts";
import { closeWhenAsked, serveErrorHandler } from "../../shared/serve_hooks.ts";
import { publicHost, readTls } from "./tls.ts";
import { type FrontCounts, serveNode } from "../serve/front/node_server.ts";
import { wireCore } from "./router_core.ts";
import { wireObservation } from "./router_observation.ts";
import { createLoadRounds } from "./load_rounds.ts";
import { wireServing } from "./router_serving.ts";
import { mountRoutes } from "./router_routes.ts";
import { routerLifecycle } from "./router_lifecycle.ts";

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
   * `state.kv` opened and closed with the router; if it cannot be opened or read, the
   * router stops at start (`StateUnavailableError`), or with `state.required: false` runs
   * without state and answers not ready.
   */
  kv?: Deno.Kv;
  /** Time between load-report rounds; default 1000 ms. */
  loadIntervalMs?: number;
  /** Where the dashboard's files come from; default the files beside the code. */
  assets?: AssetSource;
  /**
   * Registers the pre-warm job with `Deno.cron` (default true). The edge entry registers
   * its cron at module top level instead and calls {@linkcode BuiltRouter.runCron}.
   */
  registerCron?: boolean;
}

/** A router wired but not listening: its app and lifecycle, for any HTTP host. */
export interface BuiltRouter {
  /** The Hono app; `app.fetch` serves it (the second argument: the server's info). */
  app: { fetch(request: Request, info?: unknown): Response | Promise<Response> };
  /** The HTTP front's connection counts, once a `node` front serves the app (metrics). */
  connections: { read?: () => FrontCounts };
  pool: BackendPool;
  load: LoadCollector;
  alerts: AlertManager;
  balancer: Balancer | undefined;
  fleet: Fleet;
  /** Starts discovery, the lease, health checks, load polling, series and the balancer. */
  start(): Promise<void>;
  /** Ends the dashboard's live streams, so an HTTP server can finish its requests and stop. */
  closeStreams(): Promise<void>;
  /** Stops everything started (idempotent); flushes the series. */
  stop(): Promise<void>;
  /** The scheduled job's body (`Deno.cron` handler): the pre-warm run, on the leader only. */
  runCron(now?: number): Promise<"ran" | "follower" | "disabled">;
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
  /** Runs the pre-warm job once (its cron's handler), for tests and benchmarks. */
  runCron(now?: number): Promise<"ran" | "follower" | "disabled">;
  /** Stops health checks and shuts the server down gracefully (idempotent). */
  close(): Promise<void>;
  /** Settles when the server has stopped. */
  finished: Promise<void>;
}

/**
 * Wires the router described by `config` without serving it; see {@linkcode BuiltRouter}.
 * Each step reads the parts of the steps before it; parts created later (the app, the
 * balancing, the operator API) are read through `core.late` when called.
 */
export async function buildRouter(
  config: RouterConfig,
  options: StartRouterOptions = {},
): Promise<BuiltRouter> {
  const logger = options.logger ??
    createJsonLogger({ level: config.log.level, base: { service: "router" } });
  const clock = options.clock ?? systemClock;
  // Step 1: the pool, guards, state KV and fleet.
  const core = await wireCore(config, {
    logger,
    clock,
    fetch: options.fetch ?? globalThis.fetch,
    kv: options.kv,
  });
  const loadIntervalMs = options.loadIntervalMs ?? 1000;
  // Step 2: series, the dashboard's windows, alerts.
  const observed = wireObservation(core, loadIntervalMs);
  // Step 3: the load rounds that feed them and the leader's pool-wide work.
  const rounds = createLoadRounds(core, observed, loadIntervalMs);
  // Step 4: the request path and the app.
  const serving = wireServing(core, { observed, rounds }, {
    random: options.random,
    logShipping: options.logShipping,
    fetch: options.fetch,
  });
  // Step 5: the routes beside inference, placement, pre-warming and the operator API.
  const { balancing, operatorApi } = mountRoutes(core, { observed, serving }, {
    assets: options.assets,
  });
  const lifecycle = routerLifecycle({
    ...core,
    ...rounds,
    ...observed,
    balancing,
    operatorApi,
    hop: serving.hop,
    registerCron: options.registerCron !== false,
  });
  return {
    app: serving.app,
    connections: serving.connections,
    pool: core.pool,
    load: rounds.collector,
    alerts: observed.alerts,
    balancer: balancing?.balancer,
    fleet: core.fleet,
    runCron: lifecycle.runCron,
    closeStreams: () => operatorApi.close(),
    stop: lifecycle.stop,
    start: lifecycle.start,
  };
}

/** Serves `router.app` on the configured front (`router.http_server`). */
async function listen(
  config: RouterConfig,
  tls: { cert: string; key: string } | undefined,
  router: BuiltRouter,
  logger: Logger,
) {
  if (config.router.http_server === "node") {
    const front = await serveNode({
      hostname: config.router.host,
      port: config.router.port,
      tls,
      maxConnections: config.router.max_connections,
      headerTimeoutMs: config.router.header_timeout,
      idleTimeoutMs: config.router.idle_timeout,
      onError: serveErrorHandler(logger),
    }, router.app.fetch);
    router.connections.read = () => front.counts();
    return front;
  }
  return Deno.serve({
    hostname: config.router.host,
    port: config.router.port,
    ...(tls ?? {}),
    onListen: () => {},
    // Deliberate closes (408 on a slow body) log nothing; other errors one JSON line.
    onError: serveErrorHandler(logger),
  }, closeWhenAsked(router.app.fetch));
}

/** Starts the router described by `config`; resolves once it listens. */
export async function startRouter(
  config: RouterConfig,
  options: StartRouterOptions = {},
): Promise<RunningRouter> {
  const logger = options.logger ??
    createJsonLogger({ level: config.log.level, base: { service: "router" } });
  const tls = await readTls(config);
  const router = await buildRouter(config, { ...options, logger });
  await router.start();
  let server: { addr: { port: number }; finished: Promise<void>; shutdown(): Promise<void> };
  try {
    server = await listen(config, tls, router, logger);
  } catch (error) {
    await router.stop();
    throw error;
  }
  const url = `${tls ? "https" : "http"}://${publicHost(config.router.host)}:${server.addr.port}`;
  logger.info("router listening", {
    event: "start",
    url,
    tls: tls !== undefined,
    http_server: config.router.http_server,
    ...(config.router.http_server === "node"
      ? { max_connections: config.router.max_connections }
      : {}),
    policy: config.router.policy,
    backends: router.pool.urls().length,
    discovery: config.router.discovery.mode,
    router: router.fleet.id,
  });
  let closing: Promise<void> | undefined;
  return {
    url,
    pool: router.pool,
    load: router.load,
    alerts: router.alerts,
    balancer: router.balancer,
    runCron: router.runCron,
    finished: server.finished,
    close: () =>
      closing ??= (async () => {
        // Requests in flight finish (and are counted) before the series flush and close.
        await router.closeStreams();
        await server.shutdown();
        await router.stop();
        logger.info("router stopped", { event: "stop", url });
      })(),
  };
}
