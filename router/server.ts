/**
 * @module Runs the router in-process: wires the pool, the load collector and its KV
 * history, the balancer (plans in KV, admin routes), the policy, logger and app, reads
 * the TLS files when configured, and serves with `Deno.serve` (HTTPS when a cert/key
 * pair is configured). `main.ts` uses it; so can tests and the local launcher.
 */
import { dirname } from "node:path";
import { type Config, ConfigError } from "../shared/config.ts";
import { createApp } from "./app.ts";
import { createJsonLogger, type Logger } from "../shared/logger.ts";
import type { LogPipelineStats } from "../shared/logging/service_logger.ts";
import { registerPlanRoutes } from "./admin/plan_routes.ts";
import { createLogStore, registerLogRoutes } from "./logs/mod.ts";
import { registerDashboardRoutes } from "./dashboard/dashboard_routes.ts";
import { LoadTimeline } from "./dashboard/load_timeline.ts";
import { Balancer } from "./balancer/balancer.ts";
import { PlanClient } from "./balancer/plan_client.ts";
import { PlanStore } from "./balancer/plan_store.ts";
import { ReplicaWeightsPusher } from "./balancer/replica_weights_pusher.ts";
import { modelShapeFromMetadata } from "./balancer/rebalancer.ts";
import type { PoolLoad } from "./load/pool_load.ts";
import { LoadCollector } from "./load/load_collector.ts";
import { LoadHistory } from "./load/load_history.ts";
import {
  AlertManager,
  alertSettingsFromConfig,
  AlertStore,
  registerAlertRoutes,
} from "./alerts/mod.ts";
import { TrafficRecorder } from "./traffic/traffic_recorder.ts";
import { TrafficStore } from "./traffic/traffic_store.ts";
import { BackendSeries } from "./analysis/backend_series.ts";
import { registerAnalysisRoutes } from "./analysis/analysis_routes.ts";
import { registerAnalysisPages } from "./analysis/analysis_pages.ts";
import { EventStore, prewarmEventSource } from "./events/event_store.ts";
import { registerEventRoutes } from "./events/event_routes.ts";
import { ForecastService } from "./forecast/forecast_service.ts";
import { registerForecastRoutes } from "./forecast/forecast_routes.ts";
import { RouterMetrics } from "./metrics/router_metrics.ts";
import { requestLogObserver } from "./observe/request_log.ts";
import { RequestWindow } from "./observe/request_window.ts";
import { registerDoctorRoutes } from "./doctor/doctor_routes.ts";
import { Advisor } from "./advisor/advisor.ts";
import { registerAdviceRoutes } from "./advisor/advice_routes.ts";
import {
  createPrewarmJob,
  type PrewarmJob,
  registerPrewarmCron,
  registerPrewarmRoutes,
} from "./prewarm/mod.ts";
import { BackendPool } from "./pool/backend_pool.ts";
import { createPolicy } from "./routing/create_policy.ts";
import { type Clock, systemClock } from "./runtime/clock.ts";
import type { FetchLike } from "./runtime/fetch_like.ts";
import { ROUTER_VERSION } from "../shared/version.ts";

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

async function readTls(config: Config): Promise<{ cert: string; key: string } | undefined> {
  const tls = config.router.tls;
  if (tls === undefined) return undefined;
  const read = async (field: "cert" | "key") => {
    try {
      return await Deno.readTextFile(tls[field]);
    } catch (error) {
      throw new ConfigError(
        `Invalid config: router.tls.${field}: cannot read "${tls[field]}" (${
          (error as Error).message
        })`,
      );
    }
  };
  return { cert: await read("cert"), key: await read("key") };
}

function publicHost(hostname: string): string {
  if (hostname === "0.0.0.0" || hostname === "::" || hostname === "") return "localhost";
  return hostname.includes(":") ? `[${hostname}]` : hostname;
}

/** The KV store for history, and whether the router owns (closes) it. */
async function openStateKv(
  config: Config,
  options: StartRouterOptions,
  logger: Logger,
): Promise<{ kv: Deno.Kv; owned: boolean } | undefined> {
  if (options.kv !== undefined) return { kv: options.kv, owned: false };
  const location = config.state.kv;
  try {
    // An embedded file needs its directory; `:memory:` and KV Connect URLs do not.
    if (location !== ":memory:" && !/^https?:\/\//.test(location)) {
      await Deno.mkdir(dirname(location), { recursive: true });
    }
    return { kv: await Deno.openKv(location), owned: true };
  } catch (error) {
    logger.warn("load history disabled: cannot open Deno KV", {
      kv: location,
      error: (error as Error).message,
    });
    return undefined;
  }
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
  const store = await openStateKv(config, options, logger);
  const loadIntervalMs = options.loadIntervalMs ?? 1000;
  // The planner sees an EWMA whose time constant is `expert_balancer.window`.
  const alpha = 1 - Math.exp(-loadIntervalMs / Math.max(config.expert_balancer.window, 1));
  const history = store && new LoadHistory(store.kv, { clock, alpha });
  // Traffic series per bucket (requests, tokens, expert load) and scheduled events.
  const traffic = store && new TrafficStore(store.kv, {
    clock,
    bucketMs: config.traffic.bucket,
    retentionMs: config.traffic.retention,
  });
  const recorder = traffic &&
    new TrafficRecorder(traffic, { clock, logger, roundIntervalMs: loadIntervalMs });
  const events = store && new EventStore(store.kv);
  // Per-backend efficiency series (tokens, busy time, energy) for /api/analysis/efficiency.
  const backendSeries = store && new BackendSeries(store.kv, {
    clock,
    logger,
    bucketMs: config.traffic.bucket,
    retentionMs: config.traffic.retention,
    roundIntervalMs: loadIntervalMs,
  });
  // Declared before the collector so its round handler can use it once assigned.
  let weights: ReplicaWeightsPusher | undefined;
  // The dashboard's recent minutes, fed by every round.
  const timeline = new LoadTimeline();
  // Alert rules over every round; KV records and webhook POSTs never block the round.
  const alerts = new AlertManager({
    settings: alertSettingsFromConfig(config),
    views: () => pool.views(),
    clock,
    logger,
    store: store && new AlertStore(store.kv, { logger }),
    ...(config.alerts.webhook ? { webhook: { url: config.alerts.webhook, fetch } } : {}),
  });
  const collector = new LoadCollector(pool, {
    fetch,
    clock,
    logger,
    internalToken: config.auth.internal_token,
    intervalMs: loadIntervalMs,
    onRound: async (load) => {
      alerts.onRound(load);
      recorder?.recordRound(load);
      backendSeries?.recordRound(load);
      timeline.record(load);
      await history?.recordPool(load);
      await weights?.onLoad(load, [...pool.catalog().keys()][0] ?? null);
    },
  });
  const policy = createPolicy(config.router.policy, {
    ...(options.random ? { random: options.random } : {}),
    loadOf: (id) => collector.loadOf(id),
  });
  const load = {
    snapshot: () => collector.snapshot(),
    ewma: (model: string, layer: number) => history?.ewma(model, layer),
  };
  // `/metrics`: everything but the request counters is read when Prometheus scrapes.
  const metrics = new RouterMetrics({
    version: ROUTER_VERSION,
    views: () => pool.views(),
    knownModel: (model) => pool.model(model) !== undefined,
    load: () => collector.snapshot(),
    plans: store && {
      models: () => [...pool.catalog().keys()],
      currentVersion: (model) => balancer?.store.currentVersion(model) ?? Promise.resolve(null),
    },
    alerts,
    logShipping: options.logShipping,
  });
  // The doctor's latency variation and token rate through this router.
  const recent = new RequestWindow();
  const observers = [
    ...(config.log.requests ? [requestLogObserver(logger)] : []),
    metrics.observer,
    recent.observe,
    ...(recorder ? [recorder.observer] : []),
  ];
  const app = createApp({ config, pool, policy, logger, fetch, clock, load, observers, metrics });
  registerAlertRoutes(app, alerts);
  registerLogRoutes(app, {
    adminToken: config.auth.admin_token,
    store: createLogStore(config, { fetch }),
    now: () => clock.now(),
    logger,
  });
  if (traffic && events) {
    registerEventRoutes(app, {
      store: events,
      adminToken: config.auth.admin_token,
      logger,
      clock,
      defaultLeadTimeMs: config.prewarm.lead_time,
      maxBodyBytes: config.limits.max_body_bytes,
    });
    registerForecastRoutes(app, {
      forecasts: new ForecastService({ traffic, events, clock }),
      traffic,
      defaultHorizonMs: config.prewarm.horizon,
    });
  }
  let prewarm: PrewarmJob | undefined;
  const balancer = store && createBalancer(config, {
    kv: store.kv,
    pool,
    fetch,
    clock,
    logger,
    // While a pre-warm is in force the balancer also plans on the load it predicted.
    observed: (model) => {
      const observed = observedLoad(model, collector.snapshot(), history);
      return prewarm ? prewarm.blendLoad(model, observed, clock.now()) : observed;
    },
  });
  if (balancer) {
    weights = new ReplicaWeightsPusher({
      store: balancer.store,
      fetch,
      clock,
      logger,
      internalToken: config.auth.internal_token,
    });
    registerPlanRoutes(app, {
      balancer: balancer.balancer,
      store: balancer.store,
      adminToken: config.auth.admin_token,
      logger,
      maxBodyBytes: config.limits.max_body_bytes,
    });
  }
  // Pre-warm job (Deno.cron, every minute): needs KV (series, plans) and the balancer.
  let stopPrewarm: (() => void) | undefined;
  if (balancer && store && config.prewarm.enabled) {
    prewarm = createPrewarmJob(config, {
      kv: store.kv,
      balancer: balancer.balancer,
      plans: balancer.store,
      ...(events ? { events: prewarmEventSource(events) } : {}),
      backends: () => pool.views().map(({ name, url }) => ({ id: name, url })),
      poolLoad: () => collector.snapshot(),
      topK: () => {
        const [entry] = pool.catalog().values();
        const topK = entry?.metadata.parameters?.["top_k"];
        return typeof topK === "number" ? topK : null;
      },
      fetch,
      clock,
      logger,
    });
    registerPrewarmRoutes(app, prewarm);
    stopPrewarm = registerPrewarmCron(prewarm, { now: () => clock.now(), logger });
  }
  registerDoctorRoutes(app, {
    clock,
    sources: {
      experts: () => modelParameter(pool, "experts"),
      load: () => collector.snapshot(),
      ewma: (model, layer) => history?.ewma(model, layer),
      requests: recent,
    },
  });
  registerAdviceRoutes(app, {
    advisor: new Advisor({
      config,
      balancer: balancer?.balancer,
      views: () => pool.views(),
      modelShape: () => {
        const dModel = modelParameter(pool, "d_model");
        const dFf = modelParameter(pool, "d_ff");
        return dModel !== undefined && dFf !== undefined ? { dModel, dFf } : undefined;
      },
      fetch,
      clock,
      logger,
    }),
    adminToken: config.auth.admin_token,
    logger,
  });
  if (store && traffic && backendSeries) {
    registerAnalysisRoutes(app, {
      kv: store.kv,
      traffic,
      backends: backendSeries,
      clock,
      servedModels: () => [...pool.catalog().keys()],
    });
  }
  registerAnalysisPages(app);
  // Read-only page and SSE stream; its streams must end before the server can shut down.
  const dashboard = registerDashboardRoutes(app, { timeline, clock, logger, alerts });
  const stopAll = async () => {
    stopPrewarm?.();
    await dashboard.close();
    await balancer?.balancer.stop();
    await collector.stop();
    await alerts.settled();
    await recorder?.close();
    await backendSeries?.close();
    await pool.stop();
    if (store?.owned) store.kv.close();
  };
  await pool.start();
  void collector.start();
  recorder?.start();
  balancer?.balancer.start();
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
    balancer: balancer?.balancer,
    finished: server.finished,
    close: () =>
      closing ??= (async () => {
        await stopAll();
        await server.shutdown();
        logger.info("router stopped", { event: "stop", url });
      })(),
  };
}

/** A numeric parameter of the served model's metadata (`experts`, `d_model`, …). */
function modelParameter(pool: BackendPool, name: string): number | undefined {
  const [entry] = pool.catalog().values();
  const value = entry?.metadata.parameters?.[name];
  return typeof value === "number" ? value : undefined;
}

/** Per-layer expert load of `model`: the KV-history EWMA, else the latest rates. */
function observedLoad(
  model: string,
  snapshot: PoolLoad,
  history: LoadHistory | undefined,
): number[][] | null {
  const layers = snapshot.models.find((m) => m.model === model)?.layers;
  if (!layers || layers.length === 0) return null;
  const smoothed = layers.map((layer) => history?.ewma(model, layer.layer));
  if (smoothed.every((v) => v !== undefined)) return smoothed.map((v) => [...v!]);
  return layers.map((layer) => [...layer.expertTokensPerS]);
}

/** The balancer and its plan store, for the first model the pool serves. */
function createBalancer(
  config: Config,
  deps: {
    kv: Deno.Kv;
    pool: BackendPool;
    fetch: FetchLike;
    clock: Clock;
    logger: Logger;
    observed: (model: string) => number[][] | null;
  },
): { balancer: Balancer; store: PlanStore } {
  const store = new PlanStore(deps.kv);
  const balancer = new Balancer({
    store,
    client: new PlanClient({
      fetch: deps.fetch,
      clock: deps.clock,
      ...(config.auth.internal_token ? { internalToken: config.auth.internal_token } : {}),
    }),
    logger: deps.logger,
    clock: deps.clock,
    settings: config.expert_balancer,
    loadSource: deps.observed,
    // Every configured member, healthy or not (a flapping backend must not re-place),
    // named as the backends name themselves; none until every one has said its name.
    backends: () => {
      const views = deps.pool.views();
      if (views.some((view) => typeof view.details?.["backend_id"] !== "string")) return [];
      return views.map(({ name, url }) => ({ id: name, url }));
    },
    modelShape: () => {
      const [entry] = deps.pool.catalog().values();
      return entry ? modelShapeFromMetadata(entry.metadata) : null;
    },
  });
  return { balancer, store };
}
