/**
 * @module `GET /api/logs?query=<LogQL>&start=&end=&since=&limit=&direction=&step=`: log
 * queries (`streams`) and metric queries (`matrix`, every `step`) in Loki's `query_range`
 * shape, answered by the configured {@linkcode LogStore} (Loki when `loki.url` is set,
 * else the local log files).
 *
 * Admin only (`authorization: Bearer <auth.admin_token>`; 403 when none is configured,
 * 401 without it): logs hold request metadata. The query is checked against the LogQL
 * subset before any store sees it, so both stores accept and refuse the same queries:
 * syntax errors and constructs outside the subset answer 400 naming the position or the
 * construct. Loki failures answer 502 with Loki's message (504 on `loki.timeout`).
 */
import { Hono } from "hono";
import { ApiError, errorResponse } from "../../../shared/errors.ts";
import { hasBearerToken } from "../../../shared/bearer_token.ts";
import type { Logger } from "../../../shared/logger.ts";
import { LogQLError } from "./logql_ast.ts";
import { parseQuery } from "./logql_query.ts";
import { MetricQueryError } from "./metric_eval.ts";
import { type LogStore, LokiQueryError } from "./log_store.ts";
import { parseMetricRange, parseQueryRange } from "./query_range_params.ts";

/** What the log routes need. */
export interface LogRoutesDeps {
  /** `auth.admin_token`; without it the route answers 403. */
  adminToken: string | undefined;
  store: LogStore;
  /** Wall clock in ms (default `Date.now`): `end` defaults to now. */
  now?: () => number;
  /** Loki failures are logged here (never the token). */
  logger?: Logger;
}

/** `GET /api/logs` as a Hono app, mounted with `app.route("/", …)`; see the module doc. */
export function logRoutes(deps: LogRoutesDeps): Hono {
  const now = deps.now ?? Date.now;
  const app = new Hono();
  app.get("/api/logs", async (c) => {
    try {
      requireAdmin(c.req.raw.headers, deps.adminToken);
      const params = new URL(c.req.url).searchParams;
      const query = params.get("query") ?? "";
      if (query.trim() === "") {
        throw new ApiError(
          "bad_request",
          'Cannot query logs: query is required, e.g. query={service="router"} |= "error"',
        );
      }
      const parsed = parseQuery(query);
      const body = parsed.kind === "log"
        ? await deps.store.queryRange({
          query,
          parsed: parsed.log,
          range: parseQueryRange(params, now()),
        })
        : await deps.store.queryMetric({
          query,
          parsed: parsed.metric,
          range: parseMetricRange(params, now()),
        });
      return c.json(body, 200, { "x-switchyard-log-store": deps.store.kind });
    } catch (error) {
      return errorResponse(toApiError(error, deps.logger));
    }
  });
  return app;
}

function requireAdmin(headers: Headers, adminToken: string | undefined): void {
  if (adminToken === undefined || adminToken === "") {
    throw new ApiError("forbidden", "Cannot query logs: auth.admin_token is not configured");
  }
  if (!hasBearerToken(headers, adminToken)) {
    throw new ApiError("unauthorized", "Cannot query logs: missing or wrong admin token");
  }
}

function toApiError(error: unknown, logger: Logger | undefined): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof LogQLError) return new ApiError("bad_request", error.message);
  if (error instanceof MetricQueryError) {
    return new ApiError("bad_request", `Cannot query logs: ${error.message}`);
  }
  if (error instanceof RangeError) {
    return new ApiError("bad_request", `Cannot query logs: ${error.message}`);
  }
  if (error instanceof LokiQueryError) {
    logger?.warn("log query failed at Loki", { kind: error.kind, status: error.status ?? null });
    return new ApiError(
      error.kind === "timeout" ? "timeout" : "backend_error",
      `Cannot query logs: ${error.message}`,
    );
  }
  throw error;
}
