/**
 * @module Read-only forecast endpoints (no auth, no state change):
 *
 * - `GET /api/forecast?series=<key>&horizon=<duration|buckets>`: the chosen model's
 *   forecast with intervals, every model's backtest accuracy and the events applied.
 *   `horizon` is a duration (`30m`, `2h`) or a bucket count (`45`); default
 *   `prewarm.horizon`; at most one week.
 * - `GET /api/series[?model=<m>]`: the series that exist, as keys for `series=`.
 */
import { Hono } from "hono";
import { DurationSchema } from "../../../shared/config.ts";
import { ApiError, errorResponse } from "../../../shared/errors.ts";
import { eventBody } from "../events/scheduled_event.ts";
import { formatSeriesKey, parseSeriesKey, type SeriesKey } from "../traffic/series_key.ts";
import type { TrafficStore } from "../traffic/traffic_store.ts";
import type { ForecastService } from "./forecast_service.ts";

/** What the forecast routes need. */
export interface ForecastRoutesDeps {
  forecasts: ForecastService;
  traffic: TrafficStore;
  /** Horizon when the query gives none (ms), `prewarm.horizon`. */
  defaultHorizonMs: number;
  /** The pre-warm lead of events that set none (their `prewarm_at`); default 0. */
  leadMs?: () => number;
}

const WEEK_MS = 7 * 86_400_000;

function round(value: number | null): number | null {
  return value === null || !Number.isFinite(value) ? value : Math.round(value * 1000) / 1000;
}

/** Horizon in buckets from the query value; 400 naming `horizon` when unusable. */
export function parseHorizon(text: string | undefined, bucketMs: number, defaultMs: number) {
  let buckets: number;
  if (text === undefined || text === "") buckets = Math.ceil(defaultMs / bucketMs);
  else if (/^\d+$/.test(text)) buckets = Number(text);
  else {
    const parsed = DurationSchema.safeParse(text);
    if (!parsed.success) {
      throw new ApiError(
        "bad_request",
        `Cannot forecast: horizon must be a bucket count or a duration like "30m", got "${text}"`,
      );
    }
    buckets = Math.ceil(parsed.data / bucketMs);
  }
  const max = Math.floor(WEEK_MS / bucketMs);
  if (!(buckets >= 1 && buckets <= max)) {
    throw new ApiError(
      "bad_request",
      `Cannot forecast: horizon must be 1 to ${max} buckets (one week), got ${buckets}`,
    );
  }
  return buckets;
}

/** The forecast routes as a Hono app, mounted with `app.route("/", …)`; see the module doc. */
export function forecastRoutes(deps: ForecastRoutesDeps): Hono {
  const { forecasts, traffic } = deps;
  const app = new Hono();

  app.get("/api/forecast", async (c) => {
    try {
      const text = c.req.query("series");
      if (text === undefined || text === "") {
        throw new ApiError(
          "bad_request",
          "Cannot forecast: series is required, e.g. requests:<model>",
        );
      }
      let key: SeriesKey;
      try {
        key = parseSeriesKey(text);
      } catch (error) {
        throw new ApiError("bad_request", `Cannot forecast: series: ${(error as Error).message}`);
      }
      const horizon = parseHorizon(c.req.query("horizon"), traffic.bucketMs, deps.defaultHorizonMs);
      const result = await forecasts.forecast(key, horizon);
      if (result === null) {
        throw new ApiError(
          "not_found",
          `Cannot forecast: no series "${text}" (see GET /api/series)`,
        );
      }
      const backtest: Record<string, { mase: number | null; mape: number | null }> = {};
      for (const [name, accuracy] of Object.entries(result.backtest)) {
        backtest[name] = { mase: round(accuracy.mase), mape: round(accuracy.mape) };
      }
      return c.json({
        series: result.series,
        model: result.model,
        bucket_ms: result.bucketMs,
        season_length: result.seasonLength,
        history_buckets: result.historyBuckets,
        points: result.points.map((p) => ({
          at: p.at,
          value: round(p.value),
          lower: round(p.lower),
          upper: round(p.upper),
        })),
        backtest,
        events: result.events.map((e) => eventBody(e, deps.leadMs?.() ?? 0)),
      });
    } catch (error) {
      if (error instanceof ApiError) return errorResponse(error);
      throw error;
    }
  });

  app.get("/api/series", async (c) => {
    const model = c.req.query("model");
    const keys = await traffic.listSeries(model === "" ? undefined : model);
    return c.json({ bucket_ms: traffic.bucketMs, series: keys.map(formatSeriesKey) });
  });
  return app;
}
