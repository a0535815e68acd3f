/**
 * @module `POST /api/backends/announce` — register discovery's door: a backend (or its
 * sidecar) says `{"url": "http://10.0.0.5:9001", "id": "backend-1"}` every few seconds,
 * or `{"url": …, "leaving": true}` when it stops. Requires the internal token (the one
 * routers present to backends): an open door would let anyone pull traffic to their own
 * server, so without `auth.internal_token` announcements are refused (403).
 * `GET /api/backends` lists the registry (read-only).
 */
import { Hono } from "hono";
import { z } from "zod";
import { hasBearerToken } from "../../../shared/bearer_token.ts";
import { ApiError, errorResponse } from "../../../shared/errors.ts";
import { readJsonBody } from "../../../shared/json_body.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { BackendRegistry } from "./backend_registry.ts";

const AnnounceBody = z.object({
  url: z.url({ protocol: /^https?$/ }).max(2048),
  id: z.string().min(1).max(200).optional(),
  leaving: z.boolean().optional(),
}).strict();

/** What the routes need. */
export interface AnnounceRoutesDeps {
  registry: BackendRegistry;
  internalToken: string | undefined;
  logger: Logger;
  /** Called after an announcement changed the registry (to re-read it at once). */
  onChange?: () => void;
}

/** The announce and list routes as a Hono app to mount at `/api/backends`. */
export function announceRoutes(deps: AnnounceRoutesDeps): Hono {
  const app = new Hono();
  app.get("/", async (c) => c.json({ backends: await deps.registry.entries() }));
  app.post("/announce", async (c) => {
    const token = deps.internalToken;
    if (token === undefined) {
      return errorResponse(
        new ApiError(
          "forbidden",
          "Cannot announce a backend: auth.internal_token is not configured",
        ),
      );
    }
    if (!hasBearerToken(c.req.raw.headers, token)) {
      return errorResponse(
        new ApiError("unauthorized", "Cannot announce a backend: missing or wrong internal token"),
      );
    }
    let body: z.infer<typeof AnnounceBody>;
    try {
      body = await readJsonBody(c.req.raw, 4096, AnnounceBody, "announce a backend");
    } catch (error) {
      if (error instanceof ApiError) return errorResponse(error);
      throw error;
    }
    const { url, id, leaving } = body;
    if (leaving) {
      await deps.registry.withdraw(url);
      deps.logger.info("backend withdrew", { event: "backend_withdrew", url });
      deps.onChange?.();
      return c.json({ url, registered: false });
    }
    const entry = await deps.registry.announce(url, id ?? null);
    deps.onChange?.();
    return c.json({ url: entry.url, registered: true, expires_at: entry.expiresAt });
  });
  return app;
}
