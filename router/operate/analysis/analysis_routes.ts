/**
 * @module Read-only analysis endpoints (no auth: aggregates only, no request data):
 *
 * - `GET /api/analysis/activation?model=&layer=&from=&to=&top=N`: expert tokens per
 *   bucket per layer (all layers without `layer`), and the top-N hot experts over the
 *   range with their series.
 * - `GET /api/analysis/correlation?model=&from=&to=`: per request type its expert shares
 *   per layer and its concentration (0 even … 1 single expert).
 * - `GET /api/analysis/efficiency?from=&to=`: tokens/s per backend and for the pool,
 *   utilisation, tokens per joule where accelerator power was read.
 * - `GET /api/analysis/balance?model=&from=&to=`: expert skew (top-10 % share and CV)
 *   per bucket (per layer and mean) and over the range.
 *
 * `model` defaults to the first served model; range parameters in `analysis_params.ts`.
 * A bad parameter answers 400 naming it; an unknown model 404.
 */
import { Hono } from "hono";
import { ApiError } from "../../../shared/errors.ts";
import type { Clock } from "../../runtime/clock.ts";
import { parseLayer, parseRange, parseTop } from "./analysis_params.ts";
import {
  activationBody,
  type AnalysisSources,
  balanceBody,
  correlationBody,
  efficiencyBody,
} from "./analysis_queries.ts";

/** What the analysis routes need. */
export interface AnalysisRoutesDeps extends AnalysisSources {
  clock: Pick<Clock, "now">;
  /** Models the pool serves, first = default. */
  servedModels(): string[];
}

/** The model of the query: `model`, else the first served or recorded one; 404 if unknown. */
async function resolveModel(deps: AnalysisRoutesDeps, text: string | undefined): Promise<string> {
  const served = deps.servedModels();
  if (text === undefined || text === "") {
    const model = served[0] ?? (await deps.traffic.models())[0];
    if (model === undefined) {
      throw new ApiError("not_found", "Cannot analyse: no model is served or recorded yet");
    }
    return model;
  }
  if (!served.includes(text) && (await deps.traffic.index(text)) === null) {
    throw new ApiError(
      "not_found",
      `Cannot analyse: model "${text}" is neither served nor recorded (see GET /api/series)`,
    );
  }
  return text;
}

/** The analysis routes as a Hono app to mount at `/api/analysis`; see the module doc. */
export function analysisRoutes(deps: AnalysisRoutesDeps): Hono {
  const app = new Hono();
  const range = (query: (name: string) => string | undefined, bucketMs: number) =>
    parseRange(query, deps.clock.now(), bucketMs);

  app.get("/activation", async (c) => {
    const query = (name: string) => c.req.query(name);
    const model = await resolveModel(deps, query("model"));
    const layers = (await deps.traffic.index(model))?.experts.length;
    const layer = parseLayer(query, layers);
    const top = parseTop(query);
    const span = range(query, deps.traffic.bucketMs);
    return c.json(await activationBody(deps, model, { ...span, layer, top }));
  });

  app.get("/correlation", async (c) => {
    const query = (name: string) => c.req.query(name);
    const model = await resolveModel(deps, query("model"));
    return c.json(await correlationBody(deps, model, range(query, deps.traffic.bucketMs)));
  });

  app.get("/efficiency", async (c) => {
    const query = (name: string) => c.req.query(name);
    return c.json(await efficiencyBody(deps, range(query, deps.backends.bucketMs)));
  });

  app.get("/balance", async (c) => {
    const query = (name: string) => c.req.query(name);
    const model = await resolveModel(deps, query("model"));
    return c.json(await balanceBody(deps, model, range(query, deps.traffic.bucketMs)));
  });
  return app;
}
