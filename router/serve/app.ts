/**
 * @module The router's request path over HTTP: KServe Open Inference Protocol v2 in front
 * of the backend pool. Requests are checked here for what routing needs — the same
 * structural checks backends run, never the tensor values (no per-element work) — then
 * forwarded byte for byte (see `forward/forward_infer.ts`); the backend checks the values
 * once and its 400 passes through. The wiring (`server.ts`) mounts the load API,
 * `/metrics` and the operator routes on this app.
 */
import { type Context, Hono } from "hono";
import type { Config } from "../../shared/config.ts";
import { ApiError, errorResponse } from "../../shared/errors.ts";
import { checkInferRequest } from "../../shared/infer_request_codec.ts";
import { HEADER_LENGTH_HEADER, REQUEST_TYPE_HEADER } from "../../shared/oip.ts";
import { forwardInfer, noHealthyBackend } from "./forward/forward_infer.ts";
import { appendServerTiming, SERVER_TIMING_HEADER } from "../../shared/server_timing.ts";
import { routerPhases } from "./observe/router_phases.ts";
import { parseHeaderLength } from "../../shared/header_length.ts";
import { checkContentLength, readLimitedBody } from "../../shared/read_body.ts";
import type { InputFaults } from "../../shared/input_faults.ts";
import { REQUEST_ID_HEADER, requestIdFrom } from "./http/request_id.ts";
import type { Logger } from "../../shared/logger.ts";
import { createGuards, type RouterGuards } from "./guards.ts";
import type { InferenceObserver } from "./observe/inference_event.ts";
import { type InferVariables, observeInference } from "./observe/observe_inference.ts";
import type { BackendPool } from "./pool/backend_pool.ts";
import type { CatalogEntry } from "./pool/model_catalog.ts";
import type { RoutingPolicy } from "./entry/policy.ts";
import { type Clock, systemClock } from "../runtime/clock.ts";
import { requestTimers } from "../../shared/timer_queue.ts";
import type { FetchLike } from "../runtime/fetch_like.ts";
import { OIP_EXTENSIONS, ROUTER_NAME, ROUTER_VERSION } from "../../shared/version.ts";

/** Everything the router app needs, injected. */
export interface AppDeps {
  config: Config;
  pool: BackendPool;
  policy: RoutingPolicy;
  logger: Logger;
  fetch: FetchLike;
  clock: Clock;
  /** Told about every finished `POST /v2/models/:model/infer` (request log, metrics). */
  observers?: readonly InferenceObserver[];
  /** Counts clients that disconnect mid-body and bodies past `limits.body_timeout`. */
  inputFaults?: InputFaults;
  /** Admission and retry budget; default built from `config` (metrics read the same). */
  guards?: RouterGuards;
  /** Told when describing a request or an observer failed (counted and logged there). */
  onObserverError?: (kind: string, error: unknown) => void;
  /** Whether the state KV can be read (readiness); absent: not part of readiness. */
  state?: () => Promise<StateReadiness>;
}

/** The state KV's part of readiness (the wiring checks the KV). */
export interface StateReadiness {
  ok: boolean;
  kv: string;
  /** Why not, when not ok. */
  error?: string;
}

/** Hono environment of the router app. */
export type RouterEnv = { Variables: InferVariables };

/** The catalog entry for `name`, asking backends if needed; 404, or 503 when none is healthy. */
async function resolveModel(pool: BackendPool, name: string): Promise<CatalogEntry> {
  const entry = pool.model(name) ?? await pool.discoverModel(name);
  if (entry !== undefined) return entry;
  if (pool.healthyCount() === 0) throw noHealthyBackend(name);
  throw new ApiError("not_found", `Cannot find model "${name}": no backend serves it`);
}

/** The infer routes: unversioned and versioned (OIP v2 `…/versions/{v}/infer`). */
const INFER_PATHS = ["/v2/models/:model/infer", "/v2/models/:model/versions/:version/infer"];

/** 404 unless the pool serves `version` of the model. */
function requireVersion(pool: BackendPool, entry: CatalogEntry, version: string): void {
  const versions = pool.modelVersions(entry.name);
  if (!versions.includes(version)) {
    throw new ApiError(
      "not_found",
      `Cannot find model "${entry.name}" version "${version}": the pool serves ${
        versions.map((v) => `"${v}"`).join(", ") || "no version"
      }`,
    );
  }
}

/** Creates the router's Hono app. */
export function createApp(deps: AppDeps): Hono<RouterEnv> {
  const { config, pool, logger, clock } = deps;
  const guards = deps.guards ?? createGuards(config, { clock, logger });
  const app = new Hono<RouterEnv>();

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

  // One InferenceEvent per inference request, rejected ones included.
  for (const path of INFER_PATHS) {
    app.use(
      path,
      observeInference({
        observers: deps.observers ?? [],
        clock,
        ...(deps.onObserverError ? { onError: deps.onObserverError } : {}),
      }),
    );
  }
  app.use(INFER_PATHS[1]!, async (c, next) => {
    requireVersion(pool, await resolveModel(pool, c.req.param("model")!), c.req.param("version")!);
    await next();
  });

  app.on("POST", INFER_PATHS, async (c) => {
    const started = clock.now();
    const arrivedAt = performance.now();
    const requestId = c.get("requestId");
    const raw = c.req.raw;
    // Step 1: cheap rejections before reading anything (429 at once when full).
    checkContentLength(raw.headers, config.limits.max_body_bytes);
    const model = await resolveModel(pool, c.req.param("model")!);
    c.set("inferModel", model.name);
    guards.admission.checkRoom();
    // Every backend serving it full: shed now, before reading and checking the body.
    const candidates = pool.candidates(model.name);
    if (candidates.length > 0 && !candidates.some((b) => guards.admission.hasRoom(b.inFlight))) {
      throw guards.admission.backendsFull(model.name, false);
    }
    // Step 2: read (bounded in size and time) under a reader slot of its own, so slow
    // bodies hold reader slots, never the in-flight slots of requests ready to run.
    const slot = guards.readers.tryEnter();
    if (slot === undefined) throw guards.admission.readersFull(guards.readers.settings.maxReaders);
    let body: Uint8Array<ArrayBuffer>;
    try {
      body = await readLimitedBody(raw, config.limits.max_body_bytes, {
        timeoutMs: config.limits.body_timeout,
        faults: deps.inputFaults,
        signal: slot.signal,
      });
    } finally {
      slot.release();
    }
    // Step 3: admission — the body is whole; beyond the router's bound, 429.
    const leave = guards.admission.enter();
    try {
      return await handleInfer(c, requestId, raw, model, body, started, arrivedAt);
    } finally {
      leave();
    }
  });

  const handleInfer = async (
    c: Context<RouterEnv>,
    requestId: string,
    raw: Request,
    model: CatalogEntry,
    body: Uint8Array<ArrayBuffer>,
    started: number,
    arrivedAt: number,
  ): Promise<Response> => {
    // Step 4: check the structure as a backend would; values are the backend's to check
    // (once), so this hop does no work per tensor element.
    const headerLength = parseHeaderLength(raw.headers);
    const decoded = checkInferRequest(body, {
      model: { name: model.name, dModel: model.dModel },
      headerLength,
      maxTokens: config.limits.max_tokens,
      requestTypeHeader: raw.headers.get(REQUEST_TYPE_HEADER),
    });
    c.set("inferRows", decoded.rows);
    if (decoded.requestType !== undefined) c.set("inferRequestType", decoded.requestType);
    // Step 5: forward the original bytes with the headers the backend needs (name/value
    // pairs, distinct names: cheaper for fetch to take in than a Headers object).
    const token = config.auth.internal_token;
    const headers: [string, string][] = [
      [
        "content-type",
        raw.headers.get("content-type") ??
          (headerLength === null ? "application/json" : "application/octet-stream"),
      ],
      [REQUEST_ID_HEADER, requestId],
    ];
    if (token !== undefined) headers.push(["authorization", `Bearer ${token}`]);
    if (headerLength !== null) headers.push([HEADER_LENGTH_HEADER, String(headerLength)]);
    if (decoded.requestType !== undefined) headers.push([REQUEST_TYPE_HEADER, decoded.requestType]);
    const { response, upstreamMs } = await forwardInfer(
      { model: model.name, body, headers, requestId },
      {
        ...deps,
        // On the real clock the attempts' timeouts share one runtime timer.
        timers: clock === systemClock ? requestTimers : clock,
        timeoutMs: config.router.request_timeout,
        tryTimeoutMs: config.router.retry.try_timeout,
        admission: guards.admission,
        budget: guards.budget,
        onRetry: (cause) => guards.retries.set(cause, (guards.retries.get(cause) ?? 0) + 1),
      },
    );
    // Step 6: where the time went — the router's own part, the network and the backend's.
    const phases = routerPhases(performance.now() - arrivedAt, upstreamMs, response.headers);
    c.set("inferPhases", phases);
    response.headers.set(
      SERVER_TIMING_HEADER,
      appendServerTiming(response.headers.get(SERVER_TIMING_HEADER), [
        { name: "net", ms: phases.net, desc: "router to backend and back, beyond its own time" },
        { name: "router", ms: phases.router, desc: "read, check, pick, forward" },
        { name: "total", ms: phases.total },
      ]),
    );
    if (logger.enabled?.("debug") === false) return response;
    logger.debug("inference forwarded", {
      request_id: requestId,
      model: model.name,
      rows: decoded.rows,
      request_type: decoded.requestType,
      backend: response.headers.get("x-switchyard-backend"),
      status: response.status,
      ms: clock.now() - started,
    });
    return response;
  };

  return app;
}
