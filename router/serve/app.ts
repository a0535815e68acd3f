/**
 * @module The router's request path over HTTP: KServe Open Inference Protocol v2 in front
 * of the backend pool — request ids and the JSON error body, health, model metadata and
 * readiness here, inference in `infer_route.ts`. Requests are checked for what routing
 * needs — the same structural checks backends run, never the tensor values (no
 * per-element work) — then forwarded byte for byte (see `forward/forward_infer.ts`); the
 * backend checks the values once and its 400 passes through. The wiring
 * (`router/wire/router_routes.ts`) mounts the load API, `/metrics` and the operator routes
 * on this app.
 */
import { Hono } from "hono";
import { ApiError, errorResponse } from "../../shared/errors.ts";
import { REQUEST_ID_HEADER, requestIdFrom } from "./http/request_id.ts";
import type { Logger } from "../../shared/logger.ts";
import { createGuards } from "./guards.ts";
import { OIP_EXTENSIONS, ROUTER_NAME, ROUTER_VERSION } from "../../shared/version.ts";
import type { AppDeps, RouterEnv } from "./app_deps.ts";
import { inferRoutes } from "./infer_route.ts";
import { requireVersion, resolveModel } from "./model_lookup.ts";

export type { AppDeps, RouterEnv, StateReadiness } from "./app_deps.ts";

/** Creates the router's Hono app. */
export function createApp(deps: AppDeps): Hono<RouterEnv> {
  const { config, logger, clock } = deps;
  const guards = deps.guards ?? createGuards(config, { clock, logger });
  const app = new Hono<RouterEnv>();
  registerRequestIds(app, logger);
  app.route("/", modelRoutes(deps));
  app.route("/", inferRoutes({ ...deps, guards }));
  return app;
}

/** A request id on every request and answer; the JSON error body for every error. */
function registerRequestIds(app: Hono<RouterEnv>, logger: Logger): void {
  app.use("*", async (c, next) => {
    const requestId = requestIdFrom(c.req.header(REQUEST_ID_HEADER));
    c.set("requestId", requestId);
    await next();
    c.res.headers.set(REQUEST_ID_HEADER, requestId);
  });

  app.onError((error, c) => {
    if (error instanceof ApiError) return errorResponse(error);
    logger.error("request failed", {
      request_id: c.get("requestId"),
      path: c.req.path,
      error,
      stack: error.stack,
    });
    return errorResponse(new ApiError("internal", "Cannot handle request: internal error"));
  });

  app.notFound((c) =>
    errorResponse(new ApiError("not_found", `Cannot find route: ${c.req.method} ${c.req.path}`))
  );
}

/** `/v2`, liveness, readiness, and each model's metadata and readiness. */
function modelRoutes(deps: AppDeps): Hono {
  const { pool } = deps;
  const app = new Hono();
  app.get(
    "/v2",
    (c) => c.json({ name: ROUTER_NAME, version: ROUTER_VERSION, extensions: OIP_EXTENSIONS }),
  );

  app.get("/v2/health/live", (c) => c.json({ live: true }));

  app.get("/v2/health/ready", async (c) => {
    const views = pool.views();
    const healthy = views.filter((view) => view.healthy).length;
    // A router whose state KV is unavailable is not ready (plans, series, alerts are off).
    const state = await deps.state?.();
    const ready = healthy > 0 && (state?.ok ?? true);
    return c.json({
      ready,
      details: {
        ...(state ? { state } : {}),
        healthy_backends: healthy,
        total_backends: views.length,
        backends: views.map((view) => ({
          id: view.id,
          name: view.name,
          healthy: view.healthy,
          in_flight: view.inFlight,
          models: view.models,
        })),
      },
    }, ready ? 200 : 503);
  });

  // Model metadata and readiness, unversioned or for one version the pool serves.
  for (const prefix of ["/v2/models/:model", "/v2/models/:model/versions/:version"]) {
    const model = async (c: { req: { param(name: string): string | undefined } }) => {
      const entry = await resolveModel(pool, c.req.param("model")!);
      const version = c.req.param("version");
      if (version !== undefined) requireVersion(pool, entry, version);
      return entry;
    };
    app.get(prefix, async (c) => {
      const entry = await model(c);
      return c.json({ ...entry.metadata, versions: pool.modelVersions(entry.name) });
    });
    app.get(`${prefix}/ready`, async (c) => {
      const entry = await model(c);
      const ready = pool.candidates(entry.name).length > 0;
      return c.json({ name: entry.name, ready }, ready ? 200 : 503);
    });
  }
  return app;
}
