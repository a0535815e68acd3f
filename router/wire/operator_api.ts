/**
 * @module The operator-facing API and pages on the router: alerts, log queries,
 * scheduled events and forecasts, the doctor, the advisor, analysis, and the live
 * dashboard. Read-only unless the route says otherwise (admin token for changes and
 * for sensitive reads: logs, events).
 */
import type { PrewarmJob } from "../control/prewarm/prewarm_job.ts";
import { Hono } from "hono";
import type { Config } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";
import { Advisor } from "../operate/advisor/advisor.ts";
import { adviceRoutes } from "../operate/advisor/advice_routes.ts";
import { type AlertManager, alertRoutes } from "../operate/alerts/mod.ts";
import { analysisPages } from "../operate/analysis/analysis_pages.ts";
import { analysisRoutes } from "../operate/analysis/analysis_routes.ts";
import type { Balancer } from "../control/balancer/balancer.ts";
import { type Dashboard, dashboardRoutes } from "../operate/dashboard/dashboard_routes.ts";
import { type AssetSource, StaticAssets } from "../operate/dashboard/static_assets.ts";
import type { LoadTimeline } from "../operate/dashboard/load_timeline.ts";
import type { LoadWindow } from "../operate/dashboard/load_window.ts";
import type { ApiCall } from "../operate/dashboard/dashboard_snapshot.ts";
import { doctorRoutes } from "../operate/doctor/doctor_routes.ts";
import type { DoctorSources } from "../operate/doctor/doctor_inputs.ts";
import { eventRoutes } from "../control/events/event_routes.ts";
import type { EventStore } from "../control/events/event_store.ts";
import { ForecastService } from "../control/forecast/forecast_service.ts";
import { forecastRoutes } from "../control/forecast/forecast_routes.ts";
import type { PoolLoad } from "../control/load/pool_load.ts";
import type { TrafficStore } from "../control/traffic/traffic_store.ts";
import { createLogStore, logRoutes } from "../operate/logs/mod.ts";
import type { UtilisationWindow } from "../operate/doctor/utilisation_window.ts";
import type { RequestWindow } from "../operate/requests/request_window.ts";
import type { BackendPool } from "../serve/pool/backend_pool.ts";
import type { Clock } from "../runtime/clock.ts";
import type { FetchLike } from "../runtime/fetch_like.ts";
import type { RouterSeries } from "./series.ts";
import { modelParameter } from "./served_model.ts";

/** What the operator API reads. */
export interface OperatorApiDeps {
  kv: Deno.Kv | undefined;
  pool: BackendPool;
  load: () => PoolLoad;
  series: RouterSeries;
  balancer: Balancer | undefined;
  /** The pre-warm job (event checks, the lead events are prepared with), when enabled. */
  prewarm?: PrewarmJob | undefined;
  alerts: AlertManager;
  timeline: LoadTimeline;
  /** The dashboard's averaging windows (10 s, 1 min). */
  window?: LoadWindow;
  requests: RequestWindow;
  utilisation: UtilisationWindow;
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
  /** Where the dashboard's files come from; default the files beside the code. */
  assets?: AssetSource;
  /** In-process reads of the app for the dashboard's snapshots (with the viewer token). */
  api: ApiCall;
}

/** The operator API: its routes, and what the router's lifecycle and load rounds call. */
export interface OperatorApi {
  /** The routes as a Hono app, mounted with `app.route("/", …)`. */
  app: Hono;
  /** Ends the dashboard's live streams. */
  close(): Promise<void>;
  onRound(load: PoolLoad): void;
}

/** Creates the operator API; see the module doc. */
export function createOperatorApi(
  config: Pick<
    Config,
    "auth" | "batching" | "expert_balancer" | "gate" | "limits" | "log" | "loki" | "prewarm"
  >,
  deps: OperatorApiDeps,
): OperatorApi {
  const { pool, clock, logger, series } = deps;
  const app = new Hono();
  const adminToken = config.auth.admin_token;
  app.route("/", alertRoutes(deps.alerts));
  app.route(
    "/",
    logRoutes({
      adminToken,
      store: createLogStore(config, { fetch: deps.fetch }),
      now: () => clock.now(),
      logger,
    }),
  );
  if (series.traffic && series.events) {
    mountEventsAndForecasts(app, config, deps, { traffic: series.traffic, events: series.events });
  }
  app.route("/", doctorRoutes({ clock, sources: doctorSources(deps) }));
  const advisor = createAdvisor(config, deps);
  app.route("/api/advice", adviceRoutes({ advisor, adminToken, logger, clock }));
  if (deps.kv && series.traffic && series.backends) {
    app.route(
      "/api/analysis",
      analysisRoutes({
        kv: deps.kv,
        traffic: series.traffic,
        backends: series.backends,
        clock,
        servedModels: () => [...pool.catalog().keys()],
      }),
    );
  }
  // (With a viewer token, `router/wire/router_routes.ts` put the gate in front of all of this.)
  // One cache of the dashboard's files for every page.
  const assets = new StaticAssets(deps.assets);
  app.route("/", analysisPages(assets));
  // Read-only page and SSE stream; its streams must end before the server can shut down.
  const dashboard = createDashboard(config, deps, assets);
  app.route("/", dashboard.app);
  return {
    app,
    close: () => dashboard.close(),
    // Every load round: the advisor precomputes its first advice (see Advisor.prepare).
    onRound: (load) => advisor.prepare(load),
  };
}

/** Scheduled events (admin) and forecasts over the traffic series, both with the pre-warm lead. */
function mountEventsAndForecasts(
  app: Hono,
  config: Pick<Config, "auth" | "limits" | "prewarm">,
  deps: OperatorApiDeps,
  stores: { traffic: TrafficStore; events: EventStore },
): void {
  const { clock, logger } = deps;
  const leadMs = () => deps.prewarm?.lead().leadMs ?? config.prewarm.lead_time;
  app.route(
    "/api/events",
    eventRoutes({
      store: stores.events,
      adminToken: config.auth.admin_token,
      logger,
      clock,
      leadMs,
      ...(deps.prewarm ? { capacityProblem: (event) => deps.prewarm!.eventProblem(event) } : {}),
      maxBodyBytes: config.limits.max_body_bytes,
    }),
  );
  app.route(
    "/",
    forecastRoutes({
      forecasts: new ForecastService({ traffic: stores.traffic, events: stores.events, clock }),
      traffic: stores.traffic,
      defaultHorizonMs: config.prewarm.horizon,
      leadMs,
    }),
  );
}

/** What the doctor reads: the model shape, the pool's load and its windows, the history. */
function doctorSources(deps: OperatorApiDeps): DoctorSources {
  const { pool, series } = deps;
  return {
    experts: () => modelParameter(pool, "experts"),
    load: deps.load,
    utilisation: (now) => deps.utilisation.mean(now),
    loadSignal: (now) => deps.utilisation.means(now),
    ewma: (model, layer) => series.history?.ewma(model, layer),
    requests: deps.requests,
  };
}

/** The live dashboard over the load timeline and alerts, bounded by `limits.sse_*`. */
function createDashboard(
  config: Pick<Config, "limits">,
  deps: OperatorApiDeps,
  assets: StaticAssets,
): Dashboard {
  return dashboardRoutes({
    timeline: deps.timeline,
    ...(deps.window ? { window: deps.window } : {}),
    clock: deps.clock,
    logger: deps.logger,
    alerts: deps.alerts,
    assets,
    maxClients: config.limits.sse_streams,
    maxPerClient: config.limits.sse_streams_per_client,
    api: deps.api,
  });
}

/** The optimisation advisor over the pool's load, views and model shape. */
function createAdvisor(
  config: Pick<Config, "auth" | "batching" | "expert_balancer" | "gate">,
  deps: OperatorApiDeps,
): Advisor {
  const { pool } = deps;
  return new Advisor({
    config,
    balancer: deps.balancer,
    load: deps.load,
    views: () => pool.views(),
    modelShape: () => {
      const dModel = modelParameter(pool, "d_model");
      const dFf = modelParameter(pool, "d_ff");
      const [entry] = pool.catalog().values();
      const kind = entry?.metadata.parameters?.["expert_kind"] === "swiglu" ? "swiglu" : "mlp";
      return dModel !== undefined && dFf !== undefined ? { dModel, dFf, kind } : undefined;
    },
    fetch: deps.fetch,
    clock: deps.clock,
    logger: deps.logger,
  });
}
