/**
 * @module Where an inference request's time went at the router (pure): its own part
 * (reading, checking, picking, forwarding — and failed attempts before the one that
 * answered), the network (the answering attempt's wall time beyond the backend's own
 * time, from the backend's `Server-Timing` `backend` metric) and the total.
 */
import { serverTimingMs } from "../../../shared/server_timing.ts";

/** Phases of `switchyard_router_request_phase_seconds` and the router's `Server-Timing`. */
export const ROUTER_PHASES = ["router", "net", "backend", "total"] as const;

/** A request's router phases, ms. */
export type RouterPhases = Record<typeof ROUTER_PHASES[number], number>;

/**
 * The phases of a request that took `totalMs` at the router, `upstreamMs` of it in the
 * attempt that answered, whose answer carries the backend's `Server-Timing` in `headers`
 * (without it, the backend's time is unknown and counts as network: `backend` 0).
 */
export function routerPhases(totalMs: number, upstreamMs: number, headers: Headers): RouterPhases {
  const backend = Math.min(
    serverTimingMs(headers.get("server-timing"), "backend") ?? 0,
    upstreamMs,
  );
  return {
    router: Math.max(totalMs - upstreamMs, 0),
    net: upstreamMs - backend,
    backend,
    total: totalMs,
  };
}
