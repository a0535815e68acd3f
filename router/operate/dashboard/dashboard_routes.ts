/**
 * @module The live dashboard's routes on the router (all read-only: they show rates,
 * placement and alerts, never request data or secrets; open unless `auth.viewer_token`).
 *
 * - `GET /dashboard`: the page (static HTML, CSS and ES modules, ECharts from node_modules).
 * - `GET /dashboard/static/:file`, `GET /dashboard/assets/echarts.js`: its files.
 * - `GET /api/dashboard/snapshot?model=&layer=`: one snapshot as JSON (first paint, tests).
 * - `GET /api/stream?model=&layer=`: Server-Sent Events, one `snapshot` event per interval;
 *   `model`/`layer` choose the layer of the time view (default: the first). At most
 *   `limits.sse_streams` open, `limits.sse_streams_per_client` per remote address.
 *
 * With `auth.viewer_token` set, all of these are behind `router/serve/http/viewer_gate.ts`.
 */
import { Hono } from "hono";
import { ApiError } from "../../../shared/errors.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { AlertSource } from "../alerts/alert_types.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { ApiCall, TimelineSelection } from "./dashboard_snapshot.ts";
import type { LoadTimeline } from "./load_timeline.ts";
import { DASHBOARD_WINDOWS_MS, type LoadWindow } from "./load_window.ts";
import { SnapshotStream } from "./snapshot_stream.ts";
import { ECHARTS_PATH, StaticAssets } from "./static_assets.ts";

/** What the dashboard routes need. */
export interface DashboardDeps {
  /** The page's files; default read from the files beside the code. */
  assets?: StaticAssets;
  /** Fed by the load collector's rounds. */
  timeline: LoadTimeline;
  /** The averaging windows' rounds, fed like the timeline; absent: latest round only. */
  window?: LoadWindow;
  clock: Clock;
  logger: Logger;
  /** Active and recent alerts; without it the page says alerts are not available. */
  alerts?: AlertSource | undefined;
  /** In-process calls to the app's `/api/load` and `/api/plan` (the app these routes join). */
  api: ApiCall;
  /** Snapshot interval (ms); default 1000. */
  intervalMs?: number;
  /** Concurrent SSE streams; default 32. */
  maxClients?: number;
  /** Concurrent SSE streams from one client address; default 4. */
  maxPerClient?: number;
}

/** The remote address `Deno.serve` hands the app as its env (absent in-process: "local"). */
export function remoteHost(env: unknown): string {
  const addr = (env as { remoteAddr?: { hostname?: unknown } } | undefined)?.remoteAddr;
  return typeof addr?.hostname === "string" ? addr.hostname : "local";
}

/** The dashboard: its routes, its stream, and `close()` to end the streams at shutdown. */
export interface Dashboard {
  /** The routes as a Hono app, mounted with `app.route("/", …)`. */
  app: Hono;
  stream: SnapshotStream;
  /** Ends every open stream (call before the server shuts down: streams never end alone). */
  close(): Promise<void>;
}

/** `?window=`: `1s` (the latest round), `10s` or `1m`. */
const WINDOWS: Record<string, number | undefined> = {
  "1s": undefined,
  "10s": DASHBOARD_WINDOWS_MS[0],
  "1m": DASHBOARD_WINDOWS_MS[1],
};

/** Parses `?model=&layer=&window=`; 400 names the field. */
export function parseSelection(query: (name: string) => string | undefined): TimelineSelection {
  const rawWindow = query("window");
  if (rawWindow !== undefined && rawWindow !== "" && !(rawWindow in WINDOWS)) {
    throw new ApiError(
      "bad_request",
      `Cannot read dashboard query: window must be one of 1s, 10s, 1m, got "${rawWindow}"`,
    );
  }
  const windowMs = rawWindow ? WINDOWS[rawWindow] : undefined;
  const model = query("model") || undefined;
  const rawLayer = query("layer");
  let layer: number | undefined;
  if (rawLayer !== undefined && rawLayer !== "") {
    layer = Number(rawLayer);
    if (!Number.isInteger(layer) || layer < 0) {
      throw new ApiError(
        "bad_request",
        `Cannot read dashboard query: layer must be a non-negative integer, got "${rawLayer}"`,
      );
    }
  }
  return { model, layer, ...(windowMs !== undefined ? { windowMs } : {}) };
}

/** The dashboard's routes and stream; see the module doc. */
export function dashboardRoutes(deps: DashboardDeps): Dashboard {
  const assets = deps.assets ?? new StaticAssets();
  const stream = new SnapshotStream({
    sources: {
      api: deps.api,
      timeline: deps.timeline,
      window: deps.window,
      clock: deps.clock,
      alerts: deps.alerts,
    },
    logger: deps.logger,
    ...(deps.intervalMs !== undefined ? { intervalMs: deps.intervalMs } : {}),
    ...(deps.maxClients !== undefined ? { maxClients: deps.maxClients } : {}),
    ...(deps.maxPerClient !== undefined ? { maxPerClient: deps.maxPerClient } : {}),
  });

  const app = new Hono();
  app.get("/dashboard", () => assets.page());
  app.get("/dashboard/", () => assets.page());
  app.get(
    "/dashboard/static/:file",
    (c) => assets.pageFile(c.req.param("file"), c.req.header("if-none-match") ?? null),
  );
  app.get(ECHARTS_PATH, () => assets.echarts());

  app.get("/api/dashboard/snapshot", async (c) => {
    const json = await stream.snapshot(parseSelection((name) => c.req.query(name)));
    return new Response(json, {
      headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
    });
  });

  app.get(
    "/api/stream",
    (c) => stream.connect(parseSelection((name) => c.req.query(name)), remoteHost(c.env)),
  );

  return { app, stream, close: () => stream.close() };
}
