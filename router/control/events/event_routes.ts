/**
 * @module Scheduled-event endpoints.
 *
 * Every route needs the admin token (`authorization: Bearer <auth.admin_token>`): events
 * name business plans (a promotion at 20:00) that are nobody else's to read.
 * - `GET /api/events`, `GET /api/events/:id`: list and read.
 * - `POST /api/events`, `DELETE /api/events/:id`: each logged as an audit line, never
 *   with the token.
 *
 * Bad input gets a 4xx naming why, never a silent skip: a malformed body 400 (the field);
 * an event that ended already 400; one overlapping another event of the same model 409
 * (naming it); a multiplier the pool cannot reach within `prewarm.max_backends` 422 (when
 * the pre-warm job knows the capacity per backend; else it is accepted and the job caps,
 * logs and alerts). An event whose start has passed is accepted with a `warning`: the job
 * plans it now and its contract reports the missed deadline.
 */
import { Hono } from "hono";
import { ApiError, errorResponse } from "../../../shared/errors.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { Clock } from "../../runtime/clock.ts";
import { readJsonBody } from "../../../shared/json_body.ts";
import { requireAdmin } from "../../serve/http/require_admin.ts";
import type { EventStore } from "./event_store.ts";
import {
  eventBody,
  EventBodySchema,
  overlaps,
  type ScheduledEvent,
  toScheduledEvent,
} from "./scheduled_event.ts";

/** What the event routes need. */
export interface EventRoutesDeps {
  store: EventStore;
  /** `auth.admin_token`; without it every route answers 403. */
  adminToken: string | undefined;
  logger: Logger;
  clock: Pick<Clock, "now">;
  /** The pre-warm job's lead now (ms): when events that set no lead are prepared for. */
  leadMs: () => number;
  /**
   * Why the pool cannot serve `event` within its maximum (a 422), or null when it can or
   * it is not known; absent: not checked.
   */
  capacityProblem?: (event: ScheduledEvent) => string | null;
  /** Body limit; default 1 MiB. */
  maxBodyBytes?: number;
}

/** The event routes as a Hono app to mount at `/api/events`; see the module doc. */
export function eventRoutes(deps: EventRoutesDeps): Hono {
  const { store, logger } = deps;
  const app = new Hono();
  const maxBytes = Math.min(deps.maxBodyBytes ?? 1024 * 1024, 1024 * 1024);
  const wrap = (work: () => Promise<Response>) =>
    work().catch((error) => {
      if (error instanceof ApiError) return errorResponse(error);
      throw error;
    });

  app.get("/", (c) =>
    wrap(async () => {
      requireAdmin(c.req.raw.headers, deps.adminToken, "read events");
      const events = await store.list();
      const lead = deps.leadMs();
      return c.json({
        events: events.sort((a, b) => a.startMs - b.startMs).map((e) => eventBody(e, lead)),
      });
    }));

  app.get("/:id", (c) =>
    wrap(async () => {
      requireAdmin(c.req.raw.headers, deps.adminToken, "read events");
      const event = await store.get(c.req.param("id"));
      if (event === null) {
        throw new ApiError("not_found", `Cannot find event "${c.req.param("id")}"`);
      }
      return c.json(eventBody(event, deps.leadMs()));
    }));

  app.post("/", (c) =>
    wrap(async () => {
      requireAdmin(c.req.raw.headers, deps.adminToken);
      const { event, warning } = await createEvent(c.req.raw, deps, maxBytes);
      return c.json({ ...eventBody(event, deps.leadMs()), ...(warning ? { warning } : {}) }, 201);
    }));

  app.delete("/:id", (c) =>
    wrap(async () => {
      requireAdmin(c.req.raw.headers, deps.adminToken);
      const deleted = await store.delete(c.req.param("id"));
      if (deleted === null) {
        throw new ApiError("not_found", `Cannot delete event "${c.req.param("id")}": not found`);
      }
      logger.info("admin action", {
        who: "admin",
        what: "delete event",
        id: deleted.id,
        name: deleted.name,
      });
      return c.json({ deleted: eventBody(deleted, deps.leadMs()) });
    }));
  return app;
}

/**
 * Reads, checks and stores a new event from `request` (audit-logged); a `warning` when its
 * start has passed. Throws the 4xx {@linkcode ApiError} of the module doc.
 */
async function createEvent(
  request: Request,
  deps: EventRoutesDeps,
  maxBytes: number,
): Promise<{ event: ScheduledEvent; warning: string | undefined }> {
  const { store, logger } = deps;
  const body = await readJsonBody(request, maxBytes, EventBodySchema, "create event");
  const createdAt = deps.clock.now();
  const event = toScheduledEvent(body, { id: store.newId(createdAt), createdAt });
  // Bad input the schema cannot see: the past, overlaps, beyond the pool's maximum.
  if (event.endMs <= createdAt) {
    throw new ApiError(
      "bad_request",
      `Cannot create event: end "${body.end}" is in the past; nothing to prepare for`,
    );
  }
  const other = (await store.list()).find((e) => overlaps(e, event));
  if (other !== undefined) {
    throw new ApiError(
      "conflict",
      `Cannot create event: it overlaps event "${other.name}" (id "${other.id}", ${
        new Date(other.startMs).toISOString()
      } to ${
        new Date(other.endMs).toISOString()
      }) of the same model; change or delete one (overlapping multipliers would multiply)`,
    );
  }
  const problem = deps.capacityProblem?.(event) ?? null;
  if (problem !== null) {
    throw new ApiError("unprocessable", `Cannot create event: ${problem}`);
  }
  if (!await store.create(event)) {
    throw new ApiError("conflict", `Cannot create event: id "${event.id}" exists, retry`);
  }
  logger.info("admin action", {
    who: "admin",
    what: "create event",
    id: event.id,
    name: event.name,
    start: new Date(event.startMs).toISOString(),
    end: new Date(event.endMs).toISOString(),
    multiplier: event.multiplier,
  });
  // Accepted with a warning: the job plans it now and its contract reports the miss.
  const started = event.startMs <= createdAt;
  return {
    event,
    warning: started
      ? `start "${body.start}" has passed: capacity cannot be ready by it; ` +
        "the pre-warm job plans it now and reports the missed deadline"
      : undefined,
  };
}
