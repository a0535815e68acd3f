/**
 * @module Scheduled-event endpoints.
 *
 * Every route needs the admin token (`authorization: Bearer <auth.admin_token>`): events
 * name business plans (a promotion at 20:00) that are nobody else's to read.
 * - `GET /api/events`, `GET /api/events/:id`: list and read.
 * - `POST /api/events`, `DELETE /api/events/:id`: each logged as an audit line, never
 *   with the token.
 */
import type { Env, Hono } from "hono";
import { ApiError, errorResponse } from "../../../shared/errors.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { Clock } from "../../runtime/clock.ts";
import { readJsonBody } from "../../../shared/json_body.ts";
import { requireAdmin } from "../../serve/http/require_admin.ts";
import type { EventStore } from "./event_store.ts";
import { eventBody, EventBodySchema, toScheduledEvent } from "./scheduled_event.ts";

/** What the event routes need. */
export interface EventRoutesDeps {
  store: EventStore;
  /** `auth.admin_token`; without it every route answers 403. */
  adminToken: string | undefined;
  logger: Logger;
  clock: Pick<Clock, "now">;
  /** `prewarm.lead_time` (ms): lead time of events that give none. */
  defaultLeadTimeMs: number;
  /** Body limit; default 1 MiB. */
  maxBodyBytes?: number;
}

/** Adds the event routes to `app`; see the module doc. */
export function registerEventRoutes<E extends Env>(app: Hono<E>, deps: EventRoutesDeps): void {
  const { store, logger } = deps;
  const maxBytes = Math.min(deps.maxBodyBytes ?? 1024 * 1024, 1024 * 1024);
  const wrap = (work: () => Promise<Response>) =>
    work().catch((error) => {
      if (error instanceof ApiError) return errorResponse(error);
      throw error;
    });

  app.get("/api/events", (c) =>
    wrap(async () => {
      requireAdmin(c.req.raw.headers, deps.adminToken, "read events");
      const events = await store.list();
      return c.json({ events: events.sort((a, b) => a.startMs - b.startMs).map(eventBody) });
    }));

  app.get("/api/events/:id", (c) =>
    wrap(async () => {
      requireAdmin(c.req.raw.headers, deps.adminToken, "read events");
      const event = await store.get(c.req.param("id"));
      if (event === null) {
        throw new ApiError("not_found", `Cannot find event "${c.req.param("id")}"`);
      }
      return c.json(eventBody(event));
    }));

  app.post("/api/events", (c) =>
    wrap(async () => {
      requireAdmin(c.req.raw.headers, deps.adminToken);
      const body = await readJsonBody(c.req.raw, maxBytes, EventBodySchema, "create event");
      const createdAt = deps.clock.now();
      const event = toScheduledEvent(body, {
        id: store.newId(createdAt),
        createdAt,
        defaultLeadTimeMs: deps.defaultLeadTimeMs,
      });
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
      return c.json(eventBody(event), 201);
    }));

  app.delete("/api/events/:id", (c) =>
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
      return c.json({ deleted: eventBody(deleted) });
    }));
}
