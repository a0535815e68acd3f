/**
 * @module The dashboard page: paints the first snapshot from `/api/dashboard/snapshot`
 * at once, then follows `/api/stream` (Server-Sent Events, one snapshot per second).
 * The main layers × experts heatmap is a plain canvas (`heat_canvas.js`), drawn before
 * ECharts is even fetched; ECharts is imported after that first paint, for the smaller
 * detail charts. Read-only: it never changes router state.
 *
 * It says what it cannot see: a stale or down backend turns the status badge and the
 * header red and its table row red; with no fresh load at all the last heatmap stays,
 * greyed, with its age (selectors keep the models seen); an averaging window (latest
 * round, 10 s, 1 min) drives the heatmap, the hot list and the header's balancedness.
 * Open lists and hovered tooltips survive the live updates. Exposes
 * `window.switchyardDashboard` (`lastSnapshot`, `heatmap`, `charts`, `updates`, `health`,
 * timings) for tests and benchmarks.
 */
import { byId, fillSelect, setStatus, setText } from "./dom.js";
import {
  balanceText,
  formatAge,
  formatTime,
  heatmapGrid,
  hotExperts,
  modelLoad,
  poolHealth,
  problemText,
  replicaMatrix,
  timelineData,
  trendSeries,
  windowedLoad,
} from "./page_model.js";
import { replicaCountOption, replicaOption, timelineOption, trendOption } from "./charts.js";
import { renderAlerts, renderHot, renderPlan, renderResources } from "./panels.js";
import { HeatCanvas } from "./heat_canvas.js";
import { renderEplb } from "./eplb_panel.js";

const STALE_AFTER_MS = 5000;
/** ECharts charts below the main heatmap, created once ECharts has loaded. */
const DETAIL_CHARTS = {
  replicas: "chart-replicas",
  timeline: "chart-timeline",
  trend: "chart-trend",
  replicaCount: "chart-replica-count",
};
/** The latest snapshot waiting for the detail charts while ECharts loads. */
let pendingDetails = null;

/** Creates the charts `ids` names (chart name → element id); their tooltips survive updates. */
function createCharts(ids, module) {
  for (const [name, id] of Object.entries(ids)) {
    const chart = module.init(byId(id), null, { renderer: "canvas" });
    chart.getZr().on("mousemove", (event) => {
      pointers.set(chart, { x: event.offsetX, y: event.offsetY });
    });
    chart.getZr().on("globalout", () => pointers.delete(chart));
    charts[name] = chart;
  }
}

/** Where the pointer rests on each detail chart: its tooltip is shown again after an update. */
const pointers = new Map();

/** `chart.setOption(option)`, keeping a hovered tooltip on screen. */
function update(chart, option) {
  chart.setOption(option);
  const at = pointers.get(chart);
  if (at !== undefined) chart.dispatchAction({ type: "showTip", x: at.x, y: at.y });
}

/** ECharts detail charts, by name (empty until ECharts has loaded). */
const charts = {};
const selection = { model: undefined, layer: undefined, window: "1s" };
/** Models and their layers as last seen with data: selectors keep them while none reports. */
const knownModels = new Map();
/** The last heatmap drawn with data, and when: shown greyed while no fresh load arrives. */
let lastGrid = null;
const dashboard = {
  lastSnapshot: null,
  /** The main heatmap (`HeatCanvas`): `model()` is what it drew. */
  heatmap: null,
  charts,
  /** Snapshots rendered so far. */
  updates: 0,
  /** `performance.now()` when the heatmap first finished rendering. */
  firstHeatmapMs: null,
  /** `performance.now()` of the latest stream events (at most 30). */
  streamTimes: [],
  /** Latest error shown in the status line, if any. */
  error: null,
  /** The pool as the header shows it (`poolHealth()`): fresh, total, problems. */
  health: null,
};
globalThis.switchyardDashboard = dashboard;

function query() {
  const params = new URLSearchParams();
  if (selection.model !== undefined) params.set("model", selection.model);
  if (selection.layer !== undefined) params.set("layer", String(selection.layer));
  if (selection.window !== "1s") params.set("window", selection.window);
  return params.toString();
}

/**
 * Sizes chart `id` for `rows` rows (resizing `chart`, if given, when it changed); returns
 * its `{width, height}` for label spacing.
 */
function sizeChart(chart, id, rows, perRow, min, max) {
  const height = Math.max(min, Math.min(max, rows * perRow + 60));
  const node = byId(id);
  if (node.style.height !== `${height}px`) {
    node.style.height = `${height}px`;
    chart?.resize();
  }
  return { width: node.clientWidth, height };
}

/** `40 s`, `3 min`: how much time the time view covers. */
function spanText(ms) {
  return ms < 60_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`;
}

function render(snapshot) {
  const last = dashboard.lastSnapshot;
  if (last !== null && snapshot.at < last.at) return; // an older one arrived late
  const { load, plan, alerts, timeline } = snapshot;
  // The averaging window's expert load and spread, else the latest round's.
  const view = windowedLoad(load, snapshot.window);
  // Step 1: selection (defaults to the first model and layer seen); models seen with data
  // stay selectable while no backend reports.
  for (const m of view.models ?? []) knownModels.set(m.model, m.layers.map((l) => l.layer));
  const entry = modelLoad(view, selection.model);
  const model = entry?.model ?? selection.model ?? [...knownModels.keys()][0];
  const layers = entry ? entry.layers.map((l) => l.layer) : knownModels.get(model) ?? [];
  fillSelect(byId("model-select"), [...knownModels.keys()], model);
  fillSelect(byId("layer-select"), layers, selection.layer ?? layers[0]);
  const layer = selection.layer ?? timeline?.layer ?? layers[0] ?? 0;
  // Step 2: summary line; stale and down backends in red.
  const health = poolHealth(load);
  dashboard.health = health;
  setText("updated-at", formatTime(snapshot.at));
  byId("updated-at").dataset.at = String(snapshot.at);
  // Balancedness over the backends that report: say so when that is not all of them.
  const balance = balanceText(view);
  const partial = health.problems.length > 0 && health.fresh > 0 && balance !== "n/a"
    ? ` over ${health.fresh} of ${health.total}`
    : "";
  setText("pool-balancedness", `${balance}${partial}`);
  setText("backends-reporting", `${health.fresh} / ${health.total}`);
  byId("backends-health").dataset.health = health.problems.length > 0 ? "bad" : "ok";
  setText("backends-problems", problemText(health.problems));
  setText("plan-version", plan?.version ?? "none");
  setText("alerts-firing", alerts === null ? "n/a" : String(alerts.active.length));
  // Step 3: the main heatmap (canvas), then everything else.
  renderHeatmap(view, model, load.at, health);
  renderHot(byId("hot-table"), hotExperts(view, plan, model, 10));
  dashboard.lastSnapshot = snapshot;
  if (charts.replicas === undefined) {
    // ECharts is still loading: the latest snapshot waits for it.
    pendingDetails = { snapshot, entry, layer };
    return;
  }
  renderDetails(snapshot, entry, layer);
  countUpdate();
}

/**
 * The heatmap of `model`: the current (or window's) expert load; with none, the last one
 * seen, greyed, with its age; a note says when some backends are missing from it.
 */
function renderHeatmap(view, model, at, health) {
  const panel = byId("panel-heatmap");
  const heatNode = byId("chart-heatmap");
  let grid = heatmapGrid(view, model);
  const fresh = grid.rows.length > 0;
  if (fresh) lastGrid = { grid, at };
  else if (lastGrid !== null && lastGrid.grid.model === (model ?? lastGrid.grid.model)) {
    grid = lastGrid.grid;
  }
  const greyed = !fresh && grid.rows.length > 0;
  panel.classList.toggle("stale", greyed);
  heatNode.dataset.stale = String(greyed);
  setText(
    "heatmap-note",
    greyed
      ? `No fresh load since ${formatTime(lastGrid.at)} (${
        formatAge(at - lastGrid.at)
      } ago): the last heatmap, greyed. ${problemText(health.problems)}`
      : health.problems.length > 0 && fresh
      ? `From ${health.fresh} of ${health.total} backends: ${problemText(health.problems)}.`
      : "",
  );
  sizeChart(null, "chart-heatmap", grid.layers.length, 16, 160, 720);
  dashboard.heatmap.draw(grid);
  heatNode.dataset.at = String(fresh ? at : lastGrid?.at ?? at);
  heatNode.dataset.cells = String(grid.rows.reduce((n, r) => n + r.length, 0));
}

/** The status badge: live, or live but blind to some backends (red). */
function showLive() {
  const problems = dashboard.health?.problems ?? [];
  if (problems.length === 0) setStatus("live", "live");
  else {setStatus(
      "degraded",
      `live · ${problems.length} of ${dashboard.health.total} not reporting`,
    );}
}

/** After the first paint: imports ECharts, creates the detail charts, renders them. */
async function loadDetailCharts(src) {
  const echarts = await import(src);
  performance.mark("switchyard:echarts-loaded");
  createCharts(DETAIL_CHARTS, echarts);
  const pending = pendingDetails;
  pendingDetails = null;
  if (pending !== null) {
    renderDetails(pending.snapshot, pending.entry, pending.layer);
    countUpdate();
  }
  performance.mark("switchyard:details-rendered");
}

function countUpdate() {
  dashboard.updates++;
  document.body.dataset.updates = String(dashboard.updates);
}

/** The views below the main heatmap. */
function renderDetails(snapshot, entry, layer) {
  const { load, plan, alerts, timeline, trend } = snapshot;
  const replicas = replicaMatrix(load, plan, entry?.model, layer);
  const replicaSize = sizeChart(
    charts.replicas,
    "chart-replicas",
    replicas.backends.length,
    26,
    140,
    480,
  );
  update(charts.replicas, replicaOption(replicas, layer, replicaSize));
  byId("chart-replicas").dataset.kind = replicas.kind;
  setText(
    "replicas-note",
    replicas.kind === "rates"
      ? `Tokens/s each backend served per expert of layer ${layer}.`
      : replicas.kind === "hosted"
      ? `Per-backend rates not reported; showing where the plan places each expert of layer ${layer}.`
      : "No per-backend expert data and no plan yet.",
  );
  const time = timelineData(timeline);
  const timeSize = sizeChart(charts.timeline, "chart-timeline", time.experts, 10, 180, 640);
  update(charts.timeline, timelineOption(time, layer, timeline?.column_ms ?? 10000, timeSize));
  setText(
    "timeline-note",
    timeline === null
      ? knownModels.size > 0 ? "No fresh load: no backend reports now." : "No load yet."
      : `Layer ${timeline.layer}: mean tokens/s per ${timeline.column_ms / 1000} s column, last ${
        spanText(timeline.columns.length * timeline.column_ms)
      }.`,
  );
  update(charts.trend, trendOption(trendSeries(trend), plan?.threshold));
  // Step 4: tables.
  renderResources(byId("resources-table"), load);
  renderAlerts(byId("alerts-table"), byId("alerts-note"), alerts);
  const counts = renderPlan(byId("plan-facts"), byId("plan-backends"), plan, layer, load);
  renderEplb(byId("eplb-facts"), plan);
  update(charts.replicaCount, replicaCountOption(counts));
}

let source = null;

function connect() {
  source?.close();
  source = new EventSource(`/api/stream?${query()}`);
  source.addEventListener("snapshot", (event) => {
    dashboard.streamTimes.push(performance.now());
    if (dashboard.streamTimes.length > 30) dashboard.streamTimes.shift();
    try {
      render(JSON.parse(event.data));
      showLive();
    } catch (error) {
      dashboard.error = String(error);
      setStatus("error", `cannot show snapshot: ${error}`);
    }
  });
  source.addEventListener("error", () => setStatus("reconnecting", "reconnecting…"));
}

function onSelectionChange() {
  selection.window = byId("window-select").value || "1s";
  selection.model = byId("model-select").value || undefined;
  const layer = byId("layer-select").value;
  selection.layer = layer === "" ? undefined : Number(layer);
  connect(); // the stream answers at once with the new layer's timeline
}

/** Resolves after the browser has painted the current frame. */
function afterPaint() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

async function main() {
  performance.mark("switchyard:modules-evaluated");
  const echartsSrc = document.querySelector('meta[name="switchyard-echarts"]').content;
  dashboard.heatmap = new HeatCanvas(byId("chart-heatmap"), {
    onPaint: (ms) => {
      dashboard.firstHeatmapMs ??= ms;
    },
  });
  // Same URL as the page's preload, so the browser reuses that response.
  const response = await fetch("/api/dashboard/snapshot");
  if (!response.ok) throw new Error(`snapshot: status ${response.status}`);
  const first = await response.json();
  performance.mark("switchyard:snapshot-loaded");
  render(first);
  performance.mark("switchyard:first-render");
  showLive();
  connect();
  byId("model-select").addEventListener("change", onSelectionChange);
  byId("layer-select").addEventListener("change", onSelectionChange);
  byId("window-select").addEventListener("change", onSelectionChange);
  globalThis.addEventListener("resize", () => {
    dashboard.heatmap.resize();
    Object.values(charts).forEach((c) => c.resize());
  });
  setInterval(() => {
    const at = dashboard.streamTimes.at(-1);
    if (at !== undefined && performance.now() - at > STALE_AFTER_MS) {
      setStatus("stale", "no update for over 5 s");
    }
  }, 1000);
  // ECharts (about 1 MB) only after the heatmap is on screen: it would compete for the CPU.
  await afterPaint();
  await loadDetailCharts(echartsSrc);
}

main().catch((error) => {
  dashboard.error = String(error);
  setStatus("error", `cannot load dashboard: ${error}`);
});
