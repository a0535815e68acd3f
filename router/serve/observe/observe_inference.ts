/**
 * @module Hono middleware on `POST /v2/models/:model/infer` that turns every finished
 * request — answered, rejected (400/404/413), refused (503) or failed — into exactly one
 * {@linkcode InferenceEvent} for the injected observers.
 *
 * It runs inside the request-id middleware and outside the route handler, so it sees the
 * final response: Hono's `onError` has already turned a thrown {@linkcode ApiError} into
 * the client's answer. The handler leaves what it learnt (model, rows, request type) in
 * context variables; a request rejected before that falls back to the path and headers.
 * The expert trace comes from the entry backend's response headers (see
 * `shared/expert_trace.ts`). Observers are called in order, each in its own try/catch;
 * what is caught goes to `onError` (counted and logged by `ObserverFailures`).
 */
import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../../../shared/errors.ts";
import {
  BATCHES_HEADER,
  decodeBatchSizes,
  decodeExpertCounts,
  EXPERTS_HEADER,
} from "../../../shared/expert_trace.ts";
import { REQUEST_TYPE_HEADER } from "../../../shared/oip.ts";
import { BACKEND_HEADER } from "../forward/forward_infer.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { InferenceEvent, InferenceObserver } from "./inference_event.ts";
import type { RouterPhases } from "./router_phases.ts";

/** Context variables the infer handler sets for {@linkcode observeInference}. */
export interface InferVariables {
  requestId: string;
  /** Model name as resolved from the catalog. */
  inferModel?: string;
  /** Token rows of the decoded request. */
  inferRows?: number;
  /** Request type of the decoded request (parameters or header). */
  inferRequestType?: string;
  /** Where the request's time went (answered by a backend). */
  inferPhases?: RouterPhases;
}

/** Options of {@linkcode observeInference}. */
export interface ObserveInferenceOptions {
  observers: readonly InferenceObserver[];
  clock: Clock;
  /**
   * Told about what was caught instead of failing the request: `describe` (the event
   * could not be built) or `observer` (an observer threw); default: dropped.
   */
  onError?: (kind: "describe" | "observer", error: unknown) => void;
}

function pathModel(c: Context): string {
  try {
    return c.req.param("model") ?? "";
  } catch {
    return "";
  }
}

/** The message of an error answer: the thrown ApiError's, else the JSON body's `error`. */
async function errorMessage(c: Context<{ Variables: InferVariables }>): Promise<string> {
  if (c.error instanceof ApiError) return c.error.message;
  try {
    const body = await c.res.clone().json() as { error?: unknown };
    if (typeof body.error === "string") return body.error;
  } catch { /* not JSON: fall through */ }
  return `HTTP ${c.res.status}`;
}

/** Builds the event of a finished request from the context and the final response. */
async function eventOf(
  c: Context<{ Variables: InferVariables }>,
  started: number,
  at: number,
): Promise<InferenceEvent> {
  const response = c.res;
  const experts = response.headers.get(EXPERTS_HEADER);
  const batches = response.headers.get(BATCHES_HEADER);
  const event: InferenceEvent = {
    requestId: c.get("requestId"),
    model: c.get("inferModel") ?? pathModel(c),
    requestType: c.get("inferRequestType") ?? c.req.header(REQUEST_TYPE_HEADER) ?? undefined,
    rows: c.get("inferRows"),
    backend: response.headers.get(BACKEND_HEADER) ?? undefined,
    experts: experts === null ? undefined : decodeExpertCounts(experts),
    batches: batches === null ? undefined : decodeBatchSizes(batches),
    status: response.status,
    ms: at - started,
    at,
  };
  const phases = c.get("inferPhases");
  if (phases !== undefined) event.phases = phases;
  if (response.status >= 400) event.error = await errorMessage(c);
  return event;
}

/** Middleware emitting one {@linkcode InferenceEvent} per inference request. */
export function observeInference(
  options: ObserveInferenceOptions,
): MiddlewareHandler<{ Variables: InferVariables }> {
  const { observers, clock } = options;
  return async (c, next) => {
    if (c.req.method !== "POST" || observers.length === 0) return await next();
    const started = clock.now();
    await next();
    let event: InferenceEvent;
    try {
      event = await eventOf(c, started, clock.now());
    } catch (error) {
      // Never fail a request because it could not be described; say so.
      options.onError?.("describe", error);
      return;
    }
    for (const observer of observers) {
      try {
        observer(event);
      } catch (error) {
        // Observers must not affect the answer.
        options.onError?.("observer", error);
      }
    }
  };
}
