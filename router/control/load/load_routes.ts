/**
 * @module `GET /api/load` (read-only and public for now: rates and balancedness, no
 * request data or secrets); the body is {@linkcode loadApiBody}'s.
 */
import { Hono } from "hono";
import { ApiError } from "../../../shared/errors.ts";
import { LOAD_API_DETAILS, loadApiBody, type LoadApiDetail, type LoadSource } from "./load_api.ts";

/** The load API as a Hono app, mounted on the router's app with `app.route("/", …)`. */
export function loadRoutes(load: LoadSource): Hono {
  const app = new Hono();
  app.get("/api/load", (c) => {
    const detail = c.req.query("detail");
    if (detail !== undefined && !LOAD_API_DETAILS.includes(detail as LoadApiDetail)) {
      throw new ApiError(
        "bad_request",
        `Cannot serve load: detail must be one of ${
          LOAD_API_DETAILS.map((d) => `"${d}"`).join(", ")
        }, got "${detail}"`,
      );
    }
    return c.json(loadApiBody(load.snapshot(), load, detail as LoadApiDetail));
  });
  return app;
}
