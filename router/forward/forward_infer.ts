/**
 * @module Forwarding one validated inference request to an entry backend.
 *
 * Steps: 1. pick a healthy backend serving the model with the routing policy;
 * 2. count it in flight and POST the client's original bytes; 3. on a connection
 * failure mark that backend down and retry once on another (inference is idempotent);
 * 4. stream the answer through (its body is never buffered here), or answer 504 when `router.request_timeout` passes (one
 * deadline for both attempts), 502 when the retry fails too, 503 (Retry-After: 1) when
 * no healthy backend is left to try.
 */
import { ApiError } from "../../shared/errors.ts";
import { HEADER_LENGTH_HEADER } from "../../shared/oip.ts";
import { BATCHES_HEADER, EXPERTS_HEADER } from "../../shared/expert_trace.ts";
import type { Logger } from "../../shared/logger.ts";
import type { BackendPool } from "../pool/backend_pool.ts";
import type { RoutingPolicy } from "../routing/policy.ts";
import type { Clock } from "../runtime/clock.ts";
import type { FetchLike } from "../runtime/fetch_like.ts";
import { exchange } from "./backend_exchange.ts";

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
] as const;

/** Attempts per request: the first plus one retry after a connection failure. */
const MAX_ATTEMPTS = 2;

/** What {@linkcode forwardInfer} needs from the app. */
export interface ForwardDeps {
  pool: BackendPool;
  policy: RoutingPolicy;
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
  /** `router.request_timeout` in ms. */
  timeoutMs: number;
}

/** One request to forward. */
export interface ForwardRequest {
  model: string;
  /** The client's body, byte for byte. */
  body: Uint8Array<ArrayBuffer>;
  /** Headers for the backend (content type, header length, request type, auth, id). */
  headers: Headers;
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
  body: ReadableStream<Uint8Array> | null,
  backendId: string,
): Response {
  const passed = new Headers({ [BACKEND_HEADER]: backendId });
  for (const name of PASSED_HEADERS) {
    const value = headers.get(name);
    if (value !== null) passed.set(name, value);
  }
  // 204/304 and friends cannot carry a body.
  const bodyless = status === 204 || status === 304 || (status >= 100 && status < 200);
  if (bodyless) {
    void body?.cancel().catch(() => {});
    passed.delete("content-length");
  }
  return new Response(bodyless ? null : body, { status, headers: passed });
}

/** Forwards `request` and returns the response for the client; throws {@linkcode ApiError}. */
export async function forwardInfer(request: ForwardRequest, deps: ForwardDeps): Promise<Response> {
  const { pool, policy, logger, clock } = deps;
  const deadline = new AbortController();
  const timer = clock.setTimeout(() => deadline.abort(), deps.timeoutMs);
  const tried: string[] = [];
  const triedNames: string[] = [];
  try {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const candidates = pool.candidates(request.model).filter((b) => !tried.includes(b.id));
      if (candidates.length === 0) break;
      const backend = policy.pick(candidates);
      tried.push(backend.id);
      triedNames.push(backend.name);
      const release = pool.acquire(backend.id);
      let result;
      try {
        result = await exchange(deps.fetch, {
          url: `${backend.url}/v2/models/${encodeURIComponent(request.model)}/infer`,
          headers: request.headers,
          body: request.body,
          deadline: deadline.signal,
        });
      } finally {
        release();
      }
      const fields = {
        request_id: request.requestId,
        model: request.model,
        backend: backend.id,
        backend_name: backend.name,
      };
      if (result.kind === "timeout") {
        logger.warn("backend timed out", { ...fields, timeout_ms: deps.timeoutMs });
        throw new ApiError(
          "timeout",
          `Cannot run inference: backend "${backend.name}" did not answer within router.request_timeout (${deps.timeoutMs} ms)`,
        );
      }
      if (result.kind === "unreachable") {
        logger.warn("backend unreachable", { ...fields, reason: result.reason, attempt });
        pool.markDown(backend.id, `forwarding failed: ${result.reason}`);
        continue;
      }
      if (result.status === 401 || result.status === 403) {
        void result.body?.cancel().catch(() => {});
        logger.error("backend rejected the internal token", { ...fields, status: result.status });
        throw new ApiError(
          "backend_error",
          `Cannot run inference: backend "${backend.name}" refused the router`,
        );
      }
      return answer(result.status, result.headers, result.body, backend.name);
    }
  } finally {
    clock.clearTimeout(timer);
  }
  if (tried.length === 0) throw noHealthyBackend(request.model);
  if (tried.length < MAX_ATTEMPTS) {
    throw new ApiError(
      "no_healthy_backend",
      `Cannot run inference: backend "${
        triedNames[0]
      }" is unreachable and no other healthy backend serves model "${request.model}"`,
      { retryAfterS: 1 },
    );
  }
  throw new ApiError(
    "backend_error",
    `Cannot run inference: backends ${
      triedNames.map((name) => `"${name}"`).join(" and ")
    } are unreachable`,
  );
}
