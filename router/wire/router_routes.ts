/**
 * @module Step 5 of wiring a router: the routes beside inference, in the order they match —
 * the viewer gate, the load API and `/metrics`, the fleet's guards (followers answer the
 * leader's views and refuse switches), placement and pre-warming (`balancing.ts`, with KV
 * only), then the operator API and dashboard.
 */
import { loadRoutes } from "../control/load/load_routes.ts";
import type { AssetSource } from "../operate/dashboard/static_assets.ts";
import { metricsRoutes } from "../operate/metrics/metrics_routes.ts";
import { viewerMiddleware } from "../serve/http/viewer_gate.ts";
import { type Balancing, wireBalancing } from "./balancing.ts";
import { createOperatorApi, type OperatorApi } from "./operator_api.ts";
import type { RouterCore } from "./router_core.ts";
import type { RouterObservation } from "./router_observation.ts";
import type { RouterServing } from "./router_serving.ts";

/** The features the routes hang on. */
export interface RouterFeatures {
  /** Placement and pre-warming; undefined without KV. */
  balancing: Balancing | undefined;
  operatorApi: OperatorApi;
}

/** Registers the routes beside inference on `serving.app`; fills `core.late` as it goes. */
export function mountRoutes(
  core: RouterCore,
  parts: { observed: RouterObservation; serving: RouterServing },
  options: { assets?: AssetSource | undefined },
): RouterFeatures {
  const { config, pool, fleet, state, late } = core;
  const { observed, serving: { app, loadNow } } = parts;
  const viewer = config.auth.viewer_token;
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
      ewma: (model, layer) => observed.series.history?.ewma(model, layer),
      health: () => new Map(pool.views().map((view) => [view.id, view.healthy])),
    }),
  );
  app.route("/", metricsRoutes(parts.serving.metrics));
  // Before the operator routes: followers answer the leader's views and refuse switches.
  app.route("/", fleet.routes);
  const { fetch, clock, logger } = core;
  const balancing = late.balancing = state && wireBalancing(config, {
    kv: state.kv,
    pool,
    load: loadNow,
    history: observed.series.history,
    events: observed.series.events,
    fetch,
    clock,
    logger,
    ...(fleet.fence ? { fence: fleet.fence } : {}),
    owner: () => fleet.owner(),
  });
  if (balancing) app.route("/", balancing.app);
  const operatorApi = late.operatorApi = createOperatorApi(config, {
    kv: state?.kv,
    pool,
    load: loadNow,
    series: observed.series,
    balancer: balancing?.balancer,
    prewarm: balancing?.prewarm,
    alerts: observed.alerts,
    timeline: observed.timeline,
    window: observed.loadWindow,
    requests: observed.requests,
    utilisation: observed.utilisation,
    api: core.inProcess,
    fetch,
    clock,
    logger,
    ...(options.assets ? { assets: options.assets } : {}),
  });
  app.route("/", operatorApi.app);
  return { balancing, operatorApi };
}
