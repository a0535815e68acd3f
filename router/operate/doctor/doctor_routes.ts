/**
 * @module `GET /api/doctor` (read-only, aggregates only): the checklist answered from
 * live data, with the measured value next to each answer, and the verdict.
 */
import { Hono } from "hono";
import { diagnose } from "./doctor.ts";
import { doctorInputs, type DoctorSources } from "./doctor_inputs.ts";

/** `GET /api/doctor` as a Hono app, mounted with `app.route("/", …)`. */
export function doctorRoutes(deps: { sources: DoctorSources; clock: { now(): number } }): Hono {
  const app = new Hono();
  app.get("/api/doctor", (c) => {
    const now = deps.clock.now();
    const inputs = doctorInputs(deps.sources, now);
    return c.json({ at: now, inputs, ...diagnose(inputs) });
  });
  return app;
}
