/**
 * @module What the dashboard shows at one moment: the `/api/load` body (with per-backend
 * expert rates), the `/api/plan` body, active and recent alerts, the balancedness trend
 * and one layer's timeline.
 *
 * Design: load and plan are read through the router's own app (`api`, an in-process
 * `app.request`), so the dashboard always shows exactly what those endpoints answer,
 * whatever fields they gain. One {@linkcode SnapshotBase} is built per tick and shared
 * by every client; only the layer timeline differs per client, so it is spliced in as a
 * string next to the base's JSON, which is serialised once.
 */
import { alertJson } from "../alerts/alert_json.ts";
import type { AlertSource } from "../alerts/alert_types.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { LoadTimeline } from "./load_timeline.ts";
import type { LoadWindow } from "./load_window.ts";

/** In-process call into the router's app, e.g. `(path) => app.request(path)`. */
export type ApiCall = (path: string) => Response | Promise<Response>;

/** Where a snapshot's parts come from. */
export interface SnapshotSources {
  api: ApiCall;
  timeline: LoadTimeline;
  /** The averaging windows' rounds; absent: the page offers the latest round only. */
  window?: LoadWindow | undefined;
  clock: Clock;
  /** Absent until an alert manager is wired: the page then says "alerts not available". */
  alerts?: AlertSource | undefined;
}

/** The part of a snapshot every client shares, serialised once. */
export interface SnapshotBase {
  /** Server clock ms when it was built. */
  at: number;
  /** Increases by one per built base (lets a page ignore an older one). */
  seq: number;
  /** `{"at":…,"seq":…,"load":…,"plan":…,"alerts":…,"trend":…` without the closing brace. */
  json: string;
  /** Models and their layer numbers, for defaulting a client's timeline. */
  layers: ReadonlyMap<string, readonly number[]>;
}

/** Which timeline (and averaging window) a client follows. */
export interface TimelineSelection {
  model: string | undefined;
  layer: number | undefined;
  /** Averaging window (ms) beyond the latest round, `DASHBOARD_WINDOWS_MS`; absent: none. */
  windowMs?: number | undefined;
}

/** Reads a JSON endpoint of the app; `null` on 404 (feature not wired), throws otherwise. */
async function readJson(api: ApiCall, path: string): Promise<string | null> {
  const response = await api(path);
  const text = await response.text();
  if (response.status === 404) return null;
  if (!response.ok) {
    throw new Error(`Cannot read ${path} for the dashboard: status ${response.status}: ${text}`);
  }
  return text;
}

function layersOf(loadJson: string): Map<string, number[]> {
  const load = JSON.parse(loadJson) as {
    models?: { model: string; layers: { layer: number }[] }[];
  };
  return new Map((load.models ?? []).map((m) => [m.model, m.layers.map((l) => l.layer)]));
}

/** Builds one shared base: load and plan through `api`, alerts, trend. */
export async function buildSnapshotBase(
  sources: SnapshotSources,
  seq: number,
): Promise<SnapshotBase> {
  const [load, plan] = await Promise.all([
    readJson(sources.api, "/api/load?detail=replicas"),
    // A plan error must not blank the whole dashboard: show it instead.
    readJson(sources.api, "/api/plan").catch((error: Error) =>
      JSON.stringify({ error: error.message })
    ),
  ]);
  if (load === null) throw new Error("Cannot read /api/load for the dashboard: not found");
  const alerts = sources.alerts === undefined ? null : {
    active: sources.alerts.active().map(alertJson),
    recent: sources.alerts.recent().map(alertJson),
  };
  const at = sources.clock.now();
  const json = `{"at":${at},"seq":${seq},"load":${load},"plan":${plan ?? "null"},"alerts":${
    JSON.stringify(alerts)
  },"trend":${JSON.stringify(sources.timeline.trend())}`;
  return { at, seq, json, layers: layersOf(load) };
}

/** The selection a client gets: its own if it names a known layer, else the first layer. */
export function resolveSelection(
  base: SnapshotBase,
  selection: TimelineSelection,
): { model: string; layer: number } | undefined {
  const wanted = selection.model ?? [...base.layers.keys()][0];
  if (wanted === undefined) return undefined;
  const layers = base.layers.get(wanted) ?? [];
  const layer = selection.layer !== undefined && (layers.includes(selection.layer) ||
      layers.length === 0)
    ? selection.layer
    : layers[0] ?? 0;
  return { model: wanted, layer };
}

/**
 * The full snapshot JSON for one client: the base plus its layer timeline and, when it
 * chose one, its averaging window's view (`window`, else null).
 */
export function snapshotJson(
  base: SnapshotBase,
  timeline: LoadTimeline,
  selection: TimelineSelection,
  window?: LoadWindow,
): string {
  const chosen = resolveSelection(base, selection);
  const layer = chosen === undefined ? null : timeline.layer(chosen.model, chosen.layer);
  const view = window !== undefined && selection.windowMs !== undefined
    ? window.view(selection.windowMs, base.at)
    : null;
  return `${base.json},"timeline":${JSON.stringify(layer)},"window":${JSON.stringify(view)}}`;
}
