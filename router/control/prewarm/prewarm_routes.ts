/**
 * @module `GET /api/prewarm` (read-only, no auth, like `GET /api/plan`): the job's
 * settings and its last decisions, newest first — predicted load, capacity, the plan
 * version staged, parts warmed per backend and the scaling recommendation — and the
 * forecast's accuracy: each decision's `check` (predicted vs later-observed tokens/s of
 * the bucket it ran in) and `accuracy` (MAPE over the checked decisions kept).
 * `?limit=N` (1–500) returns only the newest N.
 */
import type { Env, Hono } from "hono";
import type { PrewarmJob } from "./prewarm_job.ts";

/** Adds `GET /api/prewarm` to `app`. */
export function registerPrewarmRoutes<E extends Env>(app: Hono<E>, job: PrewarmJob): void {
  app.get("/api/prewarm", (c) => {
    const raw = c.req.query("limit");
    const limit = raw === undefined ? undefined : Number(raw);
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 500)) {
      return c.json({
        error: `Cannot list pre-warm decisions: limit must be an integer 1–500, got "${raw}"`,
        code: "bad_request",
      }, 400);
    }
    const { settings } = job;
    return c.json({
      enabled: settings.enabled,
      scaler: job.scaler,
      settings: {
        horizon_ms: settings.horizon,
        threshold: settings.threshold,
        lead_time_ms: settings.lead_time,
        max_backends: settings.max_backends,
      },
      // Forecast error of the checked decisions (each decision's `check`): MAPE and the last.
      accuracy: job.accuracy(),
      decisions: job.decisions().slice(0, limit),
    });
  });
}
