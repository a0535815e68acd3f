/**
 * @module The router's inference route, `POST /v2/models/{model}[/versions/{v}]/infer`, in
 * its steps: cheap rejections, a bounded read under a reader slot, admission, the
 * structural check a backend would run (never the tensor values), the forward of the
 * original bytes (see `forward/forward_infer.ts`) and where the time went
 * (`Server-Timing`).
 */
import { type Context, Hono } from "hono";
import { checkInferRequest } from "../../shared/infer_request_codec.ts";
import { HEADER_LENGTH_HEADER, REQUEST_TYPE_HEADER } from "../../shared/oip.ts";
import { forwardInfer } from "./forward/forward_infer.ts";
import { appendServerTiming, SERVER_TIMING_HEADER } from "../../shared/server_timing.ts";
import { routerPhases } from "./observe/router_phases.ts";
import { parseHeaderLength } from "../../shared/header_length.ts";
import { checkContentLength, readLimitedBody } from "../../shared/read_body.ts";
import { REQUEST_ID_HEADER } from "./http/request_id.ts";
import type { RouterGuards } from "./guards.ts";
import { observeInference } from "./observe/observe_inference.ts";
import type { CatalogEntry } from "./pool/model_catalog.ts";
import { systemClock } from "../runtime/clock.ts";
import { requestTimers } from "../../shared/timer_queue.ts";
import type { AppDeps, RouterEnv } from "./app_deps.ts";
import { requireVersion, resolveModel } from "./model_lookup.ts";

/** The infer routes: unversioned and versioned (OIP v2 `…/versions/{v}/infer`). */
const INFER_PATHS = ["/v2/models/:model/infer", "/v2/models/:model/versions/:version/infer"];

/** The app's dependencies with the guards it admits by. */
type InferDeps = AppDeps & { guards: RouterGuards };

/** A request whose body was read and admitted, with when it arrived. */
interface ReceivedInfer {
  requestId: string;
  raw: Request;
  model: CatalogEntry;
  body: Uint8Array<ArrayBuffer>;
  /** `clock.now()` on arrival. */
  started: number;
  /** `performance.now()` on arrival. */
  arrivedAt: number;
}

/** The infer routes and their observers as a Hono app, mounted with `app.route("/", …)`. */
export function inferRoutes(deps: InferDeps): Hono<RouterEnv> {
  const { config, pool, clock, guards } = deps;
  const app = new Hono<RouterEnv>();
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
      return await handleInfer(c, { requestId, raw, model, body, started, arrivedAt }, deps);
    } finally {
      leave();
    }
  });
  return app;
}

/** Steps 4–6 of an admitted request: check, forward, time. */
async function handleInfer(
  c: Context<RouterEnv>,
  received: ReceivedInfer,
  deps: InferDeps,
): Promise<Response> {
  const { config, clock, logger, guards } = deps;
  const { requestId, raw, model, body, started, arrivedAt } = received;
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
  // Step 5: forward the original bytes with the headers the backend needs.
  const headers = forwardHeaders(received, {
    headerLength,
    requestType: decoded.requestType,
    token: config.auth.internal_token,
  });
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
}

/**
 * The headers a forwarded request carries, as name/value pairs with distinct names
 * (cheaper for fetch to take in than a Headers object).
 */
function forwardHeaders(
  received: ReceivedInfer,
  options: { headerLength: number | null; requestType: string | undefined; token?: string },
): [string, string][] {
  const { raw, requestId } = received;
  const { headerLength, requestType, token } = options;
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
  if (requestType !== undefined) headers.push([REQUEST_TYPE_HEADER, requestType]);
  return headers;
}
