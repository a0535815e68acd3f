/**
 * @module The launcher's control API for the router's `local` scaler (loopback, internal
 * token): `GET /v2/launcher/backends` lists the backends it runs, `PUT` with `{target,
 * remove}` starts and stops them (`scalable_backends.ts`). The schema is the router's
 * (`router/control/prewarm/local_scaler.ts`), so both sides read one contract. Bad input
 * answers 400 naming the field; a wrong token 401.
 */
import { Hono } from "hono";
import { z } from "zod";
import { hasBearerToken } from "../../shared/bearer_token.ts";
import type { ScalableBackends } from "./scalable_backends.ts";

const ScaleBodySchema = z.strictObject({
  target: z.int().min(0).max(1024),
  remove: z.array(z.url({ protocol: /^https?$/ })).max(1024).default([]),
  /** Informational: when the router needs them ready (ms since the epoch). */
  ready_by: z.number().nullable().optional(),
});

/** The control app; see the module doc. */
export function launcherControlApp(backends: ScalableBackends, token: string): Hono {
  const app = new Hono();
  app.use("*", async (c, next) => {
    if (!hasBearerToken(c.req.raw.headers, token)) {
      return c.json({
        error: "Cannot use the launcher API: missing or wrong token",
        code: "unauthorized",
      }, 401);
    }
    await next();
  });
  app.get("/v2/launcher/backends", (c) => c.json(backends.list()));
  app.put("/v2/launcher/backends", async (c) => {
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      return c.json({ error: "Cannot scale: the body is not JSON", code: "bad_request" }, 400);
    }
    const parsed = ScaleBodySchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return c.json({
        error: `Cannot scale: ${issue.path.join(".") || "body"}: ${issue.message}`,
        code: "bad_request",
      }, 400);
    }
    return c.json(backends.setTarget(parsed.data), 202);
  });
  return app;
}

/** Serves the control API on loopback; `url` is what the router's `prewarm.launcher_url` gets. */
export function serveLauncherControl(
  backends: ScalableBackends,
  options: { token: string; port?: number },
): { url: string; close(): Promise<void> } {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: options.port ?? 0, onListen: () => {} },
    launcherControlApp(backends, options.token).fetch,
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}
