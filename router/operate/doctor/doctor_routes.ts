/**
 * @module `GET /api/doctor` (read-only, aggregates only): the checklist answered from
 * live data, with the measured value next to each answer, and the verdict.
 */
import type { Env, Hono } from "hono";
import { diagnose } from "./doctor.ts";
import { doctorInputs, type DoctorSources } from "./doctor_inputs.ts";

/** Adds `GET /api/doctor` to `app`. */
export function registerDoctorRoutes<E extends Env>(
  app: Hono<E>,
  deps: { sources: DoctorSources; clock: { now(): number } },
): void {
  app.get("/api/doctor", (c) => {
    const now = deps.clock.now();
    const inputs = doctorInputs(deps.sources, now);
    return c.json({ at: now, inputs, ...diagnose(inputs) });
  });
}
