/**
 * @module The pre-warm job's read-only routes (no auth, like `GET /api/plan`):
 *
 * - `GET /api/prewarm`: settings, the lead time and the cold starts it was measured from,
 *   the open capacity contract, members by role, the desired backend count, the forecast's
 *   accuracy (MAPE over the checked decisions) and the last decisions, newest first.
 *   `?limit=N` (1–500) returns only the newest N.
 * - `GET /api/prewarm/desired`: what an autoscaler reads — `desired_replicas` (KEDA's
 *   metrics-api scaler: `valueLocation: desired_replicas`), the deadline and the members.
 */
import { Hono } from "hono";
import type { PrewarmJob } from "./prewarm_job.ts";

/** The pre-warm routes as a Hono app to mount at `/api/prewarm`; see the module doc. */
export function prewarmRoutes(job: PrewarmJob): Hono {
  const app = new Hono();
  app.get("/desired", (c) => {
    const contract = job.contract();
    const open = contract !== null && contract.status !== "closed";
    return c.json({
      desired_replicas: job.desired(),
      scaler: job.scaler,
      ready_by: open ? new Date(contract.readyBy).toISOString() : null,
      contract: open ? contract.id : null,
      members: job.members(),
      lead_s: Math.round(job.lead().leadMs / 1000),
    });
  });
  app.get("/", (c) => {
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
        cold_start_percentile: settings.cold_start_percentile ?? 0.95,
        lead_margin: settings.lead_margin ?? 0.25,
        min_backends: job.capacity.floor(),
        max_backends: settings.max_backends ?? null,
        scale_down_hold_ms: settings.scale_down_hold ?? 600_000,
      },
      // The lead planned with: the measured cold-start percentile × (1 + margin) + a run.
      lead: job.lead(),
      cold_starts: job.coldStarts(),
      contract: job.contract(),
      members: job.members(),
      desired_backends: job.desired(),
      deadlines_missed: job.missed,
      // Forecast error of the checked decisions (each decision's `check`): MAPE and the last.
      accuracy: job.accuracy(),
      decisions: job.decisions().slice(0, limit),
    });
  });
  return app;
}
