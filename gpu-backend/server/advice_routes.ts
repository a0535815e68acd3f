/**
 * @module The backend's gate-bias endpoints (internal; behind the internal-token check):
 * `POST /v2/advice/gate-bias` fits and evaluates a routing-only bias on the recorded
 * inputs (one evaluation at a time, 409 when busy or nothing is recorded yet), and
 * `PUT /v2/gate/bias` sets or clears the live bias. The router's advisor calls both
 * (`router/operate/advisor/bias_client.ts`).
 */
import { Hono } from "hono";
import { z } from "zod";
import { ApiError } from "../../shared/errors.ts";
import { readJsonBody } from "../../shared/json_body.ts";
import type { Logger } from "../../shared/logger.ts";
import type { MoeEngine } from "../engine/engine.ts";
import { evaluateRoutingBias } from "../advice/bias_evaluation.ts";
import type { InputRecorder } from "../advice/input_recorder.ts";

/** A bias for 60 layers × 256 experts is well under this. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

const EvaluateBodySchema = z.strictObject({
  steps: z.int().min(1).max(10_000).optional(),
  rate: z.number().gt(0).max(10).optional(),
});

const SetBiasBodySchema = z.strictObject({
  // Shape and finiteness are checked by the engine against the model.
  bias: z.array(z.array(z.number())).nullable(),
});

/** Dependencies of {@linkcode adviceRoutes}. */
export interface AdviceRoutesDeps {
  engine: MoeEngine;
  recorder: InputRecorder;
  logger: Logger;
}

/** The gate-bias endpoints as a Hono app, mounted with `app.route("/", …)`. */
export function adviceRoutes(deps: AdviceRoutesDeps): Hono {
  const { engine, recorder, logger } = deps;
  const app = new Hono();
  let busy = false;

  app.post("/v2/advice/gate-bias", async (c) => {
    const action = "evaluate a routing bias";
    const fit = await readJsonBody(c.req.raw, MAX_BODY_BYTES, EvaluateBodySchema, action, {
      allowEmpty: true,
    });
    if (busy) {
      throw new ApiError("conflict", `Cannot ${action}: another evaluation is running`);
    }
    if (recorder.size === 0) {
      throw new ApiError(
        "conflict",
        `Cannot ${action}: no inputs recorded yet (serve some inference requests first)`,
      );
    }
    busy = true;
    try {
      const started = performance.now();
      const report = await evaluateRoutingBias(recorder.snapshot(), {
        manifest: engine.manifest,
        forward: (tokens, rows, options) => engine.probe(tokens, rows, options),
        fit,
      });
      logger.info("routing bias evaluated", {
        rows: report.rows,
        relative_l2: report.output_deviation.relative_l2,
        ms: Math.round(performance.now() - started),
      });
      return c.json(report);
    } finally {
      busy = false;
    }
  });

  app.put("/v2/gate/bias", async (c) => {
    const action = "set routing bias";
    const { bias } = await readJsonBody(c.req.raw, MAX_BODY_BYTES, SetBiasBodySchema, action);
    let summary;
    try {
      summary = engine.setRoutingBias(bias);
    } catch (error) {
      throw new ApiError("bad_request", (error as Error).message);
    }
    logger.info(bias === null ? "routing bias cleared" : "routing bias set", {
      max_abs: summary.max_abs,
    });
    return c.json(summary);
  });
  return app;
}
