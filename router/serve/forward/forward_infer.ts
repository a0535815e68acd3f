/**
 * @module Forwarding one validated inference request to an entry backend.
 *
 * Steps: 1. pick, with the routing policy, a backend in rotation that serves the model
 * and has room (`router.admission.max_in_flight_per_backend`; none with room → 429
 * Retry-After; none at all → 503 Retry-After); 2. count it in flight and POST the
 * client's original bytes, limited by `router.retry.try_timeout` and by the request's
 * deadline (`router.request_timeout`, one for every attempt); 3. report the outcome to
 * the pool's outlier detection (answers, connection failures, timeouts, 5xx); 4. after
 * a timeout, a connection failure or the backend's ejection, retry once on ANOTHER
 * backend (inference is idempotent) while the deadline and the retry budget allow (every
 * other backend full: 429 Retry-After, as in step 1);
 * 5. pass the answer through — an answer of at most {@linkcode BUFFERED_ANSWER_BYTES}
 * is read whole inside the attempt (a backend dying mid-body is then retried like a
 * refused connection); a larger one streams, and once its head arrived no timeout or
 * ejection cuts it — or answer 504 (timed out), 502
 * (unreachable), 503 (Retry-After: 1) when no other backend is left to try.
 */
import { ApiError } from "../../../shared/errors.ts";
import { HEADER_LENGTH_HEADER } from "../../../shared/oip.ts";
import { BATCHES_HEADER, EXPERTS_HEADER } from "../../../shared/expert_trace.ts";
import type { Logger } from "../../../shared/logger.ts";
import { SERVER_TIMING_HEADER } from "../../../shared/server_timing.ts";
import type { Admission } from "../admission/admission.ts";
import { type BackendPool, EjectedError } from "../pool/backend_pool.ts";
import type { BackendView } from "../pool/backend_view.ts";
import type { RoutingPolicy } from "../entry/policy.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import { type AnswerBody, discard, exchange } from "./backend_exchange.ts";
import type { RetryBudget } from "./retry_budget.ts";

/** Header naming the backend that answered (its own id, see `BackendView.name`). */
export const BACKEND_HEADER = "x-switchyard-backend";

/** Response headers passed from the backend to the client (and the request log). */
const PASSED_HEADERS = [
  "content-type",
  "content-length",
  HEADER_LENGTH_HEADER,
  "retry-after",
  EXPERTS_HEADER,
  BATCHES_HEADER,
  SERVER_TIMING_HEADER,
] as const;

/**
 * Answers up to this size are read whole before they count (assumed: a demo answer is a
 * few KiB, 256 tokens of binary output ~64 KiB); with `max_in_flight` 256 this bounds
 * buffered answers at 64 MiB.
 */
export const BUFFERED_ANSWER_BYTES = 256 * 1024;

/** Attempts per request: the first plus one retry on another backend. */
const MAX_ATTEMPTS = 2;

/** What {@linkcode forwardInfer} needs from the app. */
export interface ForwardDeps {
  pool: BackendPool;
  policy: RoutingPolicy;
  fetch: FetchLike;
  clock: Clock;
  /** The attempts' timers; default `clock` (the app passes the shared queue on the real clock). */
  timers?: Pick<Clock, "setTimeout" | "clearTimeout">;
  logger: Logger;
  /** `router.request_timeout` in ms: the deadline of all attempts together. */
  timeoutMs: number;
  /** `router.retry.try_timeout` in ms: the limit of one attempt. */
  tryTimeoutMs: number;
  /** Per-backend room and shed accounting. */
  admission: Admission;
  /** Retries allowed (`router.retry.budget_*`). */
  budget: RetryBudget;
  /** Counts retries by why the attempt before failed (metrics); optional. */
  onRetry?: (cause: RetryCause) => void;
  /** High-resolution clock (ms) for the answer's `Server-Timing`; default `performance.now`. */
  hrNow?: () => number;
}

/** Why an attempt is retried. */
export type RetryCause = "timeout" | "unreachable" | "ejected";

/** One request to forward. */
export interface ForwardRequest {
  model: string;
  /** The client's body, byte for byte. */
  body: Uint8Array<ArrayBuffer>;
  /** Headers for the backend (content type, header length, request type, auth, id). */
  headers: HeadersInit;
  requestId: string;
}

/** The error answered when no backend can take a request. */
export function noHealthyBackend(model: string): ApiError {
  return new ApiError(
    "no_healthy_backend",
    `Cannot run inference: no healthy backend serves model "${model}"`,
    { retryAfterS: 1 },
  );
}

function answer(
  status: number,
  headers: Headers,
  body: AnswerBody,
  backendId: string,
): Response {
  // 204/304 and friends cannot carry a body.
  const bodyless = status === 204 || status === 304 || (status >= 100 && status < 200);
  // Name/value pairs (distinct names): cheaper for Response to take in than a Headers object.
  const passed: [string, string][] = [[BACKEND_HEADER, backendId]];
  for (const name of PASSED_HEADERS) {
    if (bodyless && name === "content-length") continue;
    const value = headers.get(name);
    if (value !== null) passed.push([name, value]);
  }
  if (bodyless) discard(body);
  return new Response(bodyless ? null : body, { status, headers: passed });
}

/** Abort reason of an attempt's own timeout. */
class TryTimeout extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = "TryTimeout";
  }
}

/** Abort reason of the request's deadline. */
class DeadlinePassed extends Error {
  constructor() {
    super("the request's deadline passed");
    this.name = "DeadlinePassed";
  }
}

/**
 * What {@linkcode forwardInfer} answers: the response for the client (the backend's
 * `Server-Timing` passed through) and the wall time of the attempt that answered (ms).
 */
export interface Forwarded {
  response: Response;
  upstreamMs: number;
}

/** Forwards `request` and returns the response for the client; throws {@linkcode ApiError}. */
export async function forwardInfer(request: ForwardRequest, deps: ForwardDeps): Promise<Forwarded> {
  const { clock, admission, budget } = deps;
  const started = clock.now();
  const tried: Tried[] = [];
  budget.request(started);
  // One timer per attempt, none for the deadline: an attempt's limit is the try timeout
  // or, when less is left, the rest of the deadline (then its end is the deadline's).
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (clock.now() - started >= deps.timeoutMs) break;
    const backend = pickBackend(request, deps, tried);
    if (backend === undefined) break;
    const outcome = await attemptOn(backend, request, deps, { started, attempt });
    if (outcome.kind === "answered") return outcome.forwarded;
    tried.push({ id: backend.id, name: backend.name, failure: outcome.failure });
  }
  throw failure(request.model, tried, deps.tryTimeoutMs, admission);
}

/** A backend an attempt failed on, and why. */
interface Tried {
  id: string;
  name: string;
  failure: RetryCause;
}

/**
 * Step 1 (and 4's conditions): a backend not tried yet with room, picked by the policy;
 * undefined when none is left or the retry budget refuses a retry. Every other backend
 * full: a shed answer (429) the client can retry after.
 */
function pickBackend(
  request: ForwardRequest,
  deps: ForwardDeps,
  tried: readonly Tried[],
): BackendView | undefined {
  const { pool, admission, budget, clock, logger } = deps;
  const candidates = pool.candidates(request.model)
    .filter((b) => !tried.some((t) => t.id === b.id));
  if (candidates.length === 0) return undefined;
  const withRoom = candidates.filter((b) => admission.hasRoom(b.inFlight));
  // Every other backend full, also for a retry: a shed answer the client can retry after
  // (429 + Retry-After), not the 504 of a request nobody could take.
  if (withRoom.length === 0) throw admission.backendsFull(request.model);
  const previous = tried[tried.length - 1];
  if (previous !== undefined) {
    if (!budget.tryRetry(clock.now())) {
      logger.warn("retry refused: retry budget spent", {
        request_id: request.requestId,
        backend: previous.id,
        cause: previous.failure,
      });
      return undefined;
    }
    deps.onRetry?.(previous.failure);
  }
  return deps.policy.pick(withRoom);
}

/** What one attempt came to: the answer to pass through, or why to try another backend. */
type Attempt =
  | { kind: "answered"; forwarded: Forwarded }
  | { kind: "failed"; failure: RetryCause };

/**
 * Steps 2–3 on `backend`: in flight, POST within the try timeout and the deadline, the
 * outcome reported to outlier detection. Throws the 504 of a passed deadline and the 502
 * of a refused token.
 */
async function attemptOn(
  backend: BackendView,
  request: ForwardRequest,
  deps: ForwardDeps,
  at: { started: number; attempt: number },
): Promise<Attempt> {
  const { pool, logger, clock } = deps;
  const timers = deps.timers ?? clock;
  const hrNow = deps.hrNow ?? (() => performance.now());
  // Log fields of this attempt, built only when something is logged.
  const fields = () => ({
    request_id: request.requestId,
    model: request.model,
    backend: backend.id,
    backend_name: backend.name,
    attempt: at.attempt,
  });
  const tryStarted = clock.now();
  const tryMs = Math.min(deps.tryTimeoutMs, deps.timeoutMs - (tryStarted - at.started));
  const byDeadline = deps.timeoutMs - (tryStarted - at.started) <= deps.tryTimeoutMs;
  // Aborted by the try timeout, the deadline or an ejection — until the head arrives.
  const tryAbort = new AbortController();
  const stop = (reason: unknown) => tryAbort.abort(reason);
  const tryTimer = timers.setTimeout(
    () => stop(byDeadline ? new DeadlinePassed() : new TryTimeout(tryMs)),
    tryMs,
  );
  const ejection = pool.ejectionSignal(backend.id);
  const onEjection = () => stop(ejection.reason);
  ejection.addEventListener("abort", onEjection);
  const release = pool.acquire(backend.id);
  const hrStarted = hrNow();
  let result;
  try {
    result = await exchange(deps.fetch, {
      url: `${backend.url}/v2/models/${encodeURIComponent(request.model)}/infer`,
      headers: request.headers,
      body: request.body,
      signal: tryAbort.signal,
      bufferLimit: BUFFERED_ANSWER_BYTES,
    });
  } finally {
    release();
    timers.clearTimeout(tryTimer);
    ejection.removeEventListener("abort", onEjection);
  }
  if (result.kind === "aborted") {
    const failure = abortedFailure(result.reason, backend, deps, { tryStarted, tryMs, fields });
    return { kind: "failed", failure };
  }
  if (result.kind === "unreachable") {
    logger.warn("backend unreachable", { ...fields(), reason: result.reason });
    pool.reportFailure(backend.id, "connection", `forwarding failed: ${result.reason}`);
    return { kind: "failed", failure: "unreachable" };
  }
  if (result.status === 401 || result.status === 403) {
    discard(result.body);
    logger.error("backend rejected the internal token", { ...fields(), status: result.status });
    throw new ApiError(
      "backend_error",
      `Cannot run inference: backend "${backend.name}" refused the router`,
    );
  }
  // 503 is a backend shedding load (it said so), not a sick one.
  if (result.status >= 500 && result.status !== 503) {
    pool.reportFailure(backend.id, "server_error", `answered ${result.status} to a request`);
  } else {
    pool.reportSuccess(backend.id);
  }
  return {
    kind: "answered",
    forwarded: {
      response: answer(result.status, result.headers, result.body, backend.name),
      upstreamMs: hrNow() - hrStarted,
    },
  };
}

/**
 * Why an aborted attempt failed: its backend's ejection, or no answer in time (reported,
 * with the router's own lag as an excuse); throws the 504 when the deadline passed.
 */
function abortedFailure(
  reason: unknown,
  backend: BackendView,
  deps: ForwardDeps,
  attempt: { tryStarted: number; tryMs: number; fields: () => Record<string, unknown> },
): RetryCause {
  const { pool, logger, clock } = deps;
  const { tryStarted, tryMs, fields } = attempt;
  if (reason instanceof EjectedError) {
    logger.warn("backend ejected while a request waited", fields());
    return "ejected";
  }
  // A try timeout or the deadline: either way the backend did not answer in time.
  const waited = clock.now() - tryStarted;
  const lag = Math.max(pool.lagSince(tryStarted), waited - tryMs);
  const verdict = pool.reportFailure(
    backend.id,
    "timeout",
    `no answer to a request within ${Math.round(waited)} ms`,
    lag,
  );
  logger.warn("backend timed out", {
    ...fields(),
    timeout_ms: tryMs,
    excused: verdict === "excused",
  });
  if (reason instanceof DeadlinePassed) {
    throw new ApiError(
      "timeout",
      `Cannot run inference: backend "${backend.name}" did not answer within router.request_timeout (${deps.timeoutMs} ms)`,
    );
  }
  return "timeout";
}

/** The error after every attempt failed (or none could start). */
function failure(
  model: string,
  tried: readonly { name: string; failure: RetryCause }[],
  tryTimeoutMs: number,
  admission: Admission,
): ApiError {
  const last = tried[tried.length - 1];
  if (last === undefined) {
    return admission.shed(
      "no_backend",
      `Cannot run inference: no healthy backend serves model "${model}"`,
    );
  }
  const names = tried.map((t) => `"${t.name}"`).join(" and ");
  if (last.failure === "timeout") {
    return new ApiError(
      "timeout",
      `Cannot run inference: backend ${names} did not answer within router.retry.try_timeout (${tryTimeoutMs} ms) and no other attempt was possible`,
    );
  }
  if (tried.length < MAX_ATTEMPTS) {
    return new ApiError(
      "no_healthy_backend",
      `Cannot run inference: backend ${names} is ${
        last.failure === "ejected" ? "ejected" : "unreachable"
      } and no other healthy backend serves model "${model}"`,
      { retryAfterS: 1 },
    );
  }
  return new ApiError(
    "backend_error",
    `Cannot run inference: backends ${names} are unreachable or ejected`,
  );
}
