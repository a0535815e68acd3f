/**
 * @module Advisor endpoints.
 *
 * - `GET /api/advice[?refresh=1]` (read-only): every recommendation with its evidence,
 *   expected effect, risk and how it is applied.
 * - `POST /api/advice/apply {"id": "replacement" | "gate_bias"}` (admin): applies a live
 *   recommendation exactly as last shown; audit-logged.
 * - `DELETE /api/advice/gate_bias` (admin): removes the routing-only bias; audit-logged.
 */
import { Hono } from "hono";
import { z } from "zod";
import { ApiError, errorResponse } from "../../../shared/errors.ts";
import type { Logger } from "../../../shared/logger.ts";
import { readJsonBody } from "../../../shared/json_body.ts";
import { requireAdmin } from "../../serve/http/require_admin.ts";
import { AdviceNotApplicable, type Advisor } from "./advisor.ts";
import type { Advice } from "./advice_types.ts";
import type { Clock } from "../../runtime/clock.ts";

const ApplyBodySchema = z.strictObject({ id: z.enum(["replacement", "gate_bias"]) });

function adviceBody(advice: Advice) {
  return {
    id: advice.id,
    title: advice.title,
    recommended: advice.recommended,
    evidence: advice.evidence,
    expected_effect: advice.expectedEffect,
    risk: advice.risk,
    apply: advice.apply,
    ...(advice.settings ? { settings: advice.settings } : {}),
    details: advice.details,
  };
}

/** The advisor routes as a Hono app to mount at `/api/advice`; see the module doc. */
export function adviceRoutes(deps: {
  advisor: Advisor;
  adminToken: string | undefined;
  logger: Logger;
  clock: Pick<Clock, "now">;
}): Hono {
  const app = new Hono();
  app.get("/", async (c) => {
    const report = await deps.advisor.advise(c.req.query("refresh") === "1");
    return c.json({
      at: report.at,
      // How old the advice is when answered (a cached report may be up to 30 s + old).
      age_ms: Math.max(0, deps.clock.now() - report.at),
      // Precomputed without the bias evaluation; the full report is being computed.
      partial: report.partial ?? false,
      // Whether it was made on measured traffic (false: an idle pool's advice).
      traffic: report.traffic ?? null,
      advice: report.advice.map(adviceBody),
    });
  });

  app.post("/apply", async (c) => {
    requireAdmin(c.req.raw.headers, deps.adminToken);
    const body = await readJsonBody(c.req.raw, 4096, ApplyBodySchema, "apply advice");
    try {
      const result = await deps.advisor.apply(body.id);
      deps.logger.info("admin action", { who: "admin", what: "apply advice", id: body.id });
      return c.json({ applied: body.id, result });
    } catch (error) {
      if (error instanceof AdviceNotApplicable) {
        return errorResponse(new ApiError("conflict", error.message));
      }
      throw error;
    }
  });

  app.delete("/gate_bias", async (c) => {
    requireAdmin(c.req.raw.headers, deps.adminToken);
    const result = await deps.advisor.clearBias();
    deps.logger.info("admin action", { who: "admin", what: "clear gate bias" });
    return c.json({ cleared: "gate_bias", result });
  });
  return app;
}
