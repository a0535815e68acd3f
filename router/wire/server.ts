/**
 * @module Runs the router in-process: opens the state KV, builds the pool, the load
 * collector, the routing policy and the app, and wires the features that ride on them —
 * time series (`series.ts`), placement and pre-warming (`balancing.ts`),
 * metrics, alerts, and the operator API and dashboard (`operator_api.ts`) — then
 * serves on `node:http` (`router/serve/front/`: connection cap, header timeout) or `Deno.serve`
 * (`router.http_server`), HTTPS when a cert/key pair is configured. `router/main.ts` uses
 * it; so can tests and the local launcher.
 */
import type { Config } from "../../shared/config.ts";
import { createJsonLogger, type Logger } from "../../shared/logger.ts";
import type { LogPipelineStats } from "../../shared/logging/service_logger.ts";
import { ROUTER_VERSION } from "../../shared/version.ts";
import { AlertManager, alertSettingsFromConfig, AlertStore } from "../operate/alerts/mod.ts";
import { createApp } from "../serve/app.ts";
import type { Balancer } from "../control/balancer/balancer.ts";
import { LoadTimeline } from "../operate/dashboard/load_timeline.ts";
import { LoadWindow } from "../operate/dashboard/load_window.ts";
import { UtilisationWindow } from "../operate/doctor/utilisation_window.ts";
import { LoadCollector } from "../control/load/load_collector.ts";
import type { PoolLoad } from "../control/load/pool_load.ts";
import { LatestRunner } from "../runtime/latest_runner.ts";
import { RouterMetrics } from "../operate/metrics/router_metrics.ts";
import { metricsRoutes } from "../operate/metrics/metrics_routes.ts";
import { loadRoutes } from "../control/load/load_routes.ts";
import type { InferenceObserver } from "../serve/observe/inference_event.ts";
import { ObserverFailures } from "../operate/requests/observer_failures.ts";
import { requestLogObserver } from "../operate/requests/request_log.ts";
import { RequestWindow } from "../operate/requests/request_window.ts";
import { PoolLatency } from "../operate/requests/pool_latency.ts";
import { BackendPool } from "../serve/pool/backend_pool.ts";
import { createGuards } from "../serve/guards.ts";
import { LoopLagMonitor } from "../serve/health/loop_lag.ts";
import { createPolicy } from "../serve/entry/create_policy.ts";
import { type Clock, systemClock } from "../runtime/clock.ts";
import type { FetchLike } from "../runtime/fetch_like.ts";
import { backendFetch } from "../serve/forward/backend_fetch.ts";
import { type Balancing, wireBalancing } from "./balancing.ts";
import { registerPrewarmCron } from "../control/prewarm/prewarm_job.ts";
import { missedCronRun } from "../control/prewarm/prewarm_history.ts";
import type { AssetSource } from "../operate/dashboard/static_assets.ts";
import { registerOperatorApi } from "./operator_api.ts";
import { createFleet, type Fleet } from "./fleet.ts";
import { createRouterSeries } from "./series.ts";
import { openStateKv, StateHealth } from "./state_kv.ts";
import { resolvePoolId } from "../control/leader/pool_id.ts";
import { InputFaults } from "../../shared/input_faults.ts";
import { closeWhenAsked, serveErrorHandler } from "../../shared/serve_hooks.ts";
import { publicHost, readTls } from "./tls.ts";
import { viewerMiddleware } from "../serve/http/viewer_gate.ts";
import { type FrontCounts, serveNode } from "../serve/front/node_server.ts";

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

/** Wires the router described by `config` without serving it; see {@linkcode BuiltRouter}. */
export async function buildRouter(
  config: Config,
  options: StartRouterOptions = {},
): Promise<BuiltRouter> {
  const logger = options.logger ??
    createJsonLogger({ level: config.log.level, base: { service: "router" } });
  const clock = options.clock ?? systemClock;
  const fetch = options.fetch ?? globalThis.fetch;
  // The router's own event-loop lag: health excuses timeouts it explains.
  const lag = new LoopLagMonitor(clock);
  const pool = BackendPool.fromConfig(config, {
    fetch,
    clock,
    logger,
    lagSince: (since) => lag.maxSince(since),
  });
  const guards = createGuards(config, { clock, logger });
  const opened = await openStateKv(config, options.kv, logger);
  const state = opened.state;
  // Readiness says when the KV is unavailable (state.required: false) or stops reading.
  const stateHealth = new StateHealth(opened, {
    location: options.kv === undefined ? config.state.kv : "(provided)",
    clock,
  });
  const viewer = config.auth.viewer_token;
  const inProcess = (path: string) =>
    app!.request(path, viewer ? { headers: { authorization: `Bearer ${viewer}` } } : {});
  // Assigned once the app exists (it registers routes); rounds and metrics use it then.
  // deno-lint-ignore prefer-const
  let balancing: Balancing | undefined;
  // One router among many: the lease picks the one running the control loops; plan calls
  // carry the pool id (shared through the KV) and the lease's term.
  const poolId = await resolvePoolId(state?.kv, config.state.pool_id);
  const fleet = createFleet(config, {
    poolId,
    kv: state?.kv,
    pool,
    clock,
    logger,
    // New or vanished backends: the leader re-plans at once.
    onMembership: () => {
      if (fleet.isLeader()) void balancing?.balancer.tick();
    },
    // The leader's /api/plan copy is stale once it names another version than KV's current.
    viewStale: async (path, body) => {
      if (path !== "/api/plan" || balancing === undefined) return false;
      const view = JSON.parse(body) as { model: string | null; version: number | null };
      if (view.model === null) return false;
      return view.version !== await balancing.store.currentVersion(view.model);
    },
  });
  const loadIntervalMs = options.loadIntervalMs ?? 1000;
  const fence = fleet.fence;
  const series = createRouterSeries(state?.kv, config, {
    clock,
    logger,
    loadIntervalMs,
    shard: fleet.id,
    ...(fence ? { fence: async () => (await fence())?.check ?? null } : {}),
  });
  // The dashboard's recent minutes and the doctor's utilisation, fed by every round.
  const timeline = new LoadTimeline();
  const loadWindow = new LoadWindow();
  const utilisation = new UtilisationWindow();
  // Alert rules over every round; KV records and webhook POSTs never block the round.
  // Every router evaluates (its dashboard shows them); only the leader announces.
  const alertStore = state && new AlertStore(state.kv, { logger });
  // The doctor's latency variation and token rate through this router; the latency SLO.
  const requests = new RequestWindow();
  // The latency SLO over every router's requests (histograms shared through the KV).
  const poolLatency = new PoolLatency({
    kv: state?.kv,
    id: fleet.id,
    own: (now) => requests.latencyHistogram(now, config.alerts.latency_window),
    clock,
    logger,
  });
  const alerts = new AlertManager({
    settings: alertSettingsFromConfig(config),
    views: () => pool.views(),
    latency: (now) => poolLatency.reading(now),
    rebalance: () => {
      const balancer = balancing?.balancer;
      const model = balancer?.modelShape()?.name;
      return balancer && model
        ? {
          model,
          health: balancer.health(),
          fullReplication: balancer.placement()?.choice === "full_replication",
        }
        : undefined;
    },
    // Capacity contracts at risk or missed, a scaler failing (the pre-warm job's).
    conditions: () => balancing?.prewarm?.conditions() ?? [],
    clock,
    logger,
    store: alertStore,
    announcing: () => fleet.isLeader(),
    ...(config.alerts.webhook
      ? { webhook: { url: config.alerts.webhook, fetch, format: config.alerts.webhook_format } }
      : {}),
    ...(config.alerts.alertmanager
      ? { alertmanager: { url: config.alerts.alertmanager, fetch } }
      : {}),
    externalUrl: `${
      config.router.tls?.cert ? "https" : "http"
    }://localhost:${config.router.port}/dashboard`,
  });
  // The collector's rounds publish views through the app, created below.
  // deno-lint-ignore prefer-const
  let app: ReturnType<typeof createApp> | undefined;
  // Its rounds also warm the advisor, registered with the operator API below.
  // deno-lint-ignore prefer-const
  let operatorApi: ReturnType<typeof registerOperatorApi> | undefined;
  const collector = new LoadCollector(pool, {
    fetch,
    clock,
    logger,
    internalToken: config.auth.internal_token,
    intervalMs: loadIntervalMs,
    scaleTarget: config.prewarm.threshold,
    maxBackends: config.prewarm.max_backends ?? 1024,
    // Requests this router shed because the pool was at its limits: saturation too.
    routerCounts: () => {
      const sheds = guards.admission.sheds();
      const full = (sheds.get("router_full") ?? 0) + (sheds.get("backends_full") ?? 0);
      const admitted = guards.admission.admitted;
      return { shed: full, admitted: Math.max(0, admitted) };
    },
    onRound: (load) => {
      balancing?.costs.record(load);
      alerts.onRound(load);
      timeline.record(load);
      loadWindow.record(load);
      utilisation.record(load);
      operatorApi?.onRound(load);
      // Pool-wide series, replica weights and the views followers read: the leader's, beside
      // the rounds (a slow KV write or backend call never delays alerts or the dashboard).
      if (fleet.isLeader()) leaderRounds.offer(load);
    },
  });
  const leaderRounds = new LatestRunner<PoolLoad>(async (load) => {
    if (!fleet.isLeader()) return;
    await series.recordRound(load, collector.latestReports());
    await balancing?.onRound(load);
    await fleet.views?.publish((path) => Promise.resolve(inProcess(path)));
  }, (error) => logger.warn("leader round failed", { error: (error as Error).message }));
  const policy = createPolicy(config.router.policy, {
    ...(options.random ? { random: options.random } : {}),
    loadOf: (id) => collector.loadOf(id),
  });
  const loadNow = () => collector.snapshot();
  // Clients that vanish mid-body or send too slowly: counted, never logged as errors.
  const inputFaults = new InputFaults();
  // Observer failures: counted by kind, the first of each kind logged.
  const observerFailures = new ObserverFailures(logger);
  observerFailures.declare("describe");
  // Set by `startRouter` when a `node` front serves the app.
  const connections: BuiltRouter["connections"] = {};
  // `/metrics`: everything but the request counters is read when Prometheus scrapes.
  const metrics = new RouterMetrics({
    inputFaults,
    observerErrors: () => observerFailures.counts(),
    version: ROUTER_VERSION,
    views: () => pool.views(),
    knownModel: (model) => pool.model(model) !== undefined,
    load: loadNow,
    plans: state && {
      models: () => [...pool.catalog().keys()],
      currentVersion: (model) => balancing?.store.currentVersion(model) ?? Promise.resolve(null),
      reconciliations: () => balancing?.reconciler.counts ?? { reconciled: 0, failed: 0 },
    },
    alerts,
    leadership: {
      leadership: () => fleet.leadership(),
      refusedPlanCalls: () => balancing?.refusedPlanCalls() ?? 0,
    },
    logShipping: options.logShipping,
    prewarm: () => balancing?.prewarm,
    eplb: state && {
      balancer: () => balancing?.balancer,
      costs: () => balancing?.costs,
      now: () => clock.now(),
    },
    overload: {
      ejections: () => pool.outlier.ejections(),
      excused: () => pool.outlier.excused,
      panic: () => pool.panic(),
      lagMs: () => lag.recentMax(),
      sheds: () => guards.admission.sheds(),
      retries: () => guards.retries,
      retriesRefused: () => guards.budget.refused,
      inFlight: () => guards.admission.inFlight,
      bodyReaders: () => guards.readers.reading,
      connections: () => connections.read?.(),
    },
  });
  const guard = (kind: string, observer: InferenceObserver) =>
    observerFailures.guard(kind, observer);
  const observers = [
    ...(config.log.requests ? [guard("request_log", requestLogObserver(logger))] : []),
    guard("metrics", metrics.observer),
    guard("request_window", requests.observe),
    ...series.observers.map((observer) => guard("traffic_recorder", observer)),
  ];
  // The inference hop's client (`router.backend_protocol`); injected fetches win (tests).
  const hop = options.fetch
    ? { fetch: options.fetch, close: () => {} }
    : backendFetch(config.router.backend_protocol);
  app = createApp({
    config,
    pool,
    policy,
    logger,
    fetch: hop.fetch,
    clock,
    observers,
    inputFaults,
    guards,
    onObserverError: (kind, error) => observerFailures.record(kind, error),
    state: () => stateHealth.check(),
  });
  // With a viewer token: the gate before every route it covers (pages, streams, and
  // with auth.viewer_covers `/api` reads and `/metrics`); the router's own in-process reads
  // (dashboard snapshots, the leader's views) carry the token.
  if (viewer !== undefined) {
    app.use(
      "*",
      viewerMiddleware({
        tokens: { viewer, admin: config.auth.admin_token },
        covers: config.auth.viewer_covers,
      }),
    );
  }
  // The load API and `/metrics`, ahead of the fleet's guards and the operator routes.
  app.route(
    "/",
    loadRoutes({
      snapshot: loadNow,
      ewma: (model, layer) => series.history?.ewma(model, layer),
      health: () => new Map(pool.views().map((view) => [view.id, view.healthy])),
    }),
  );
  app.route("/", metricsRoutes(metrics));
  // Before the operator routes: followers answer the leader's views and refuse switches.
  fleet.register(app);
  balancing = state && wireBalancing(app, config, {
    kv: state.kv,
    pool,
    load: loadNow,
    history: series.history,
    events: series.events,
    fetch,
    clock,
    logger,
    ...(fleet.fence ? { fence: fleet.fence } : {}),
    owner: () => fleet.owner(),
  });
  operatorApi = registerOperatorApi(app, config, {
    kv: state?.kv,
    pool,
    load: loadNow,
    series,
    balancer: balancing?.balancer,
    prewarm: balancing?.prewarm,
    alerts,
    timeline,
    window: loadWindow,
    requests,
    utilisation,
    api: inProcess,
    fetch,
    clock,
    logger,
    ...(options.assets ? { assets: options.assets } : {}),
  });
  const prewarm = balancing?.prewarm;
  const runCron = async (now = clock.now()) => {
    if (prewarm === undefined) return "disabled" as const;
    if (!fleet.isLeader()) return "follower" as const;
    await prewarm.run(now);
    return "ran" as const;
  };
  // A new leader runs the pre-warm job at once when a cron minute passed since the last
  // run (or, with none recorded, since the previous leader's term began): a dead leader
  // holding the lease over a minute boundary ran nothing.
  const runMissedCron = async () => {
    if (prewarm === undefined) return;
    const now = clock.now();
    const since = prewarm.lastRunAt() ?? await fleet.previousTermSince();
    if (!missedCronRun(since, now)) return;
    logger.info("prewarm run missed while nobody led: running it now", {
      event: "leader",
      since,
    });
    await runCron(now);
  };
  let stopCron: (() => void) | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    stopping ??= (async () => {
      stopCron?.();
      await operatorApi.close();
      await balancing?.stop();
      await collector.stop();
      await leaderRounds.settled();
      await alerts.settled();
      await poolLatency.stop();
      await series.close();
      await fleet.stop();
      await pool.stop();
      hop.close();
      lag.stop();
      if (state?.owned) state.kv.close();
    })();
  return {
    app,
    connections,
    pool,
    load: collector,
    alerts,
    balancer: balancing?.balancer,
    fleet,
    runCron,
    closeStreams: () => operatorApi.close(),
    stop,
    async start() {
      lag.start();
      await fleet.start();
      await pool.start();
      void collector.start();
      series.start();
      poolLatency.start();
      // The balancer ticks on the leader only; a new leader continues the alerts it finds.
      fleet.whileLeader(async () => {
        if (alertStore) alerts.resume(await alertStore.list());
        await series.lead();
        await prewarm?.resume();
        balancing?.start();
        await runMissedCron();
      }, () => {
        series.follow();
        return balancing?.stop();
      });
      if (prewarm && options.registerCron !== false) {
        stopCron = registerPrewarmCron({ run: (now) => runCron(now) }, {
          now: () => clock.now(),
          logger,
        });
      }
    },
  };
}

/** Serves `router.app` on the configured front (`router.http_server`). */
async function listen(
  config: Config,
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
  config: Config,
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
