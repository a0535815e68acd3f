/**
 * @module The request log: one JSON line per inference request (`log.requests`), written
 * by an {@linkcode InferenceObserver} through the router's {@linkcode Logger}.
 *
 * Line: `msg "request"`, `event "request"`, `request_id`, `model`, `request_type`,
 * `backend` (entry backend), `experts` (the compact per-layer trace of
 * `shared/expert_trace.ts`, e.g. `3*5,7*3;1*4,30*4`), `batches` (largest joined
 * micro-batch per layer, e.g. `4;6`), `rows`, `ms`, `status`, `error`. Unknown values
 * are `null`, so every line has the same keys (easy `| json` queries). 2xx answers log
 * at info, everything else at warn — except 429s: a request shed at once at admission is
 * counted (`switchyard_router_shed_total{reason}`) and logged once per reason every 10 s
 * with the count (`serve/admission/`); a line per shed request would spend the CPU an
 * overloaded router needs on writing what the count already says.
 */
import { encodeBatchSizes, encodeExpertCounts } from "../../../shared/expert_trace.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { InferenceEvent, InferenceObserver } from "../../serve/observe/inference_event.ts";

/** `event` field of request lines. */
export const REQUEST_EVENT = "request";

/** The structured fields of one request line. */
export function requestLogFields(event: InferenceEvent): Record<string, unknown> {
  return {
    event: REQUEST_EVENT,
    request_id: event.requestId,
    model: event.model,
    request_type: event.requestType ?? null,
    backend: event.backend ?? null,
    experts: event.experts === undefined ? null : encodeExpertCounts(event.experts),
    batches: event.batches === undefined ? null : encodeBatchSizes(event.batches),
    rows: event.rows ?? null,
    ms: Math.round(event.ms * 100) / 100,
    status: event.status,
    error: event.error ?? null,
  };
}

/** An observer writing the request line of every finished inference request. */
export function requestLogObserver(logger: Logger): InferenceObserver {
  return (event) => {
    if (event.status === 429) return;
    const ok = event.status >= 200 && event.status < 300;
    // Below the log level: the line would be dropped, so its fields are not built.
    if (logger.enabled?.(ok ? "info" : "warn") === false) return;
    const fields = requestLogFields(event);
    if (ok) logger.info(REQUEST_EVENT, fields);
    else logger.warn(REQUEST_EVENT, fields);
  };
}
