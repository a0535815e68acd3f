/**
 * @module ECharts options for the dashboard's detail charts (the main layers × experts
 * heatmap is drawn on a canvas: `heat_canvas.js`). Heatmaps carry no per-cell labels
 * (unreadable at 256 experts): colour comes from a visualMap on a perceptually uniform
 * sequential scale (viridis: dark = idle, yellow = hottest; no middle colour reads as
 * "no data"), exact values from the tooltip. Every expert is on screen by default: wide
 * axes get a dataZoom slider that starts at the full range (zooming is an option), and
 * their labels are thinned to every Nth expert so they never overlap. Tooltip strings
 * are escaped.
 */
import { escapeHtml } from "./dom.js";
import { HEAT_COLOURS, labelStep } from "./heat_scale.js";
import { formatNumber, formatTime } from "./page_model.js";

/** Experts beyond which the expert axis gets a dataZoom slider (at the full range). */
const ZOOM_EXPERTS = 64;

function expertLabels(count) {
  return Array.from({ length: count }, (_, e) => String(e));
}

function categoryLabels(count, lengthPx, minPx) {
  const step = labelStep(count, lengthPx, minPx);
  return { interval: step - 1, hideOverlap: true, fontSize: 11 };
}

function zoom(count, axis) {
  if (count <= ZOOM_EXPERTS) return [];
  const key = axis === "x" ? "xAxisIndex" : "yAxisIndex";
  const place = axis === "x" ? { height: 14, bottom: 4 } : { width: 12, left: 2 };
  return [
    { type: "slider", [key]: 0, start: 0, end: 100, ...place, filterMode: "none" },
    { type: "inside", [key]: 0, start: 0, end: 100, filterMode: "none", zoomOnMouseWheel: "ctrl" },
  ];
}

/** An axis name centred under (x) or beside (y) the axis, clear of the visualMap. */
function axisName(name, axis) {
  return axis === "x"
    ? { name, nameLocation: "middle", nameGap: 22 }
    : { name, nameLocation: "middle", nameGap: 30, nameRotate: 90 };
}

/** A vertical colour legend that fits a chart `heightPx` tall (its text included). */
function visualMap(max, unit, heightPx = 200) {
  return {
    type: "continuous",
    min: 0,
    max: max > 0 ? max : 1,
    calculable: true,
    orient: "vertical",
    right: 4,
    top: "middle",
    itemWidth: 12,
    itemHeight: Math.max(40, Math.min(140, heightPx - 70)),
    text: [unit, ""],
    textStyle: { fontSize: 11 },
    inRange: { color: HEAT_COLOURS },
  };
}

/** Experts × backends heatmap of one layer (tokens/s, or hosted 1/0 from the plan). */
export function replicaOption(view, layer, size = { width: 600, height: 200 }) {
  const unit = view.kind === "rates" ? "tok/s" : "hosted";
  const plotWidth = Math.max(100, size.width - 96 - 96);
  return {
    animation: false,
    grid: { left: 96, right: 96, top: 8, bottom: view.experts > ZOOM_EXPERTS ? 64 : 40 },
    tooltip: {
      formatter: (p) => {
        const [expert, y, value] = p.data;
        const what = view.kind === "rates"
          ? `${formatNumber(value, 3)} tokens/s`
          : "replica placed by the plan";
        return escapeHtml(`layer ${layer}, expert ${expert} on ${view.backends[y]}: ${what}`);
      },
    },
    xAxis: {
      type: "category",
      ...axisName("expert", "x"),
      data: expertLabels(view.experts),
      axisLabel: categoryLabels(view.experts, plotWidth, 28),
    },
    yAxis: { type: "category", data: view.backends },
    visualMap: visualMap(view.max, unit, size.height),
    dataZoom: zoom(view.experts, "x"),
    series: [{ id: "replicas", type: "heatmap", data: view.data, progressive: 0 }],
  };
}

/** Experts × recent columns heatmap of one layer. */
export function timelineOption(view, layer, columnMs, size = { width: 600, height: 400 }) {
  const labels = view.starts.map((s) => formatTime(s));
  const plotHeight = Math.max(40, size.height - 8 - 28);
  const plotWidth = Math.max(100, size.width - 72 - 96);
  return {
    animation: false,
    grid: { left: view.experts > ZOOM_EXPERTS ? 72 : 52, right: 96, top: 8, bottom: 28 },
    tooltip: {
      formatter: (p) => {
        const [x, expert, value] = p.data;
        return escapeHtml(
          `layer ${layer}, expert ${expert}, ${labels[x]} (+${columnMs / 1000} s): ` +
            `${formatNumber(value, 3)} tokens/s (mean)`,
        );
      },
    },
    xAxis: {
      type: "category",
      data: labels,
      axisLabel: categoryLabels(labels.length, plotWidth, 64),
    },
    yAxis: {
      type: "category",
      ...axisName("expert", "y"),
      data: expertLabels(view.experts),
      inverse: true,
      axisLabel: categoryLabels(view.experts, plotHeight, 14),
    },
    visualMap: visualMap(view.max, "tok/s", size.height),
    dataZoom: zoom(view.experts, "y"),
    series: [{ id: "timeline", type: "heatmap", data: view.data, progressive: 0 }],
  };
}

/** Balancedness (pool, worst layer) and expert skew trend lines (0..1). */
export function trendOption(series, threshold) {
  const line = (name, data) => ({
    name,
    type: "line",
    data,
    showSymbol: false,
    connectNulls: false,
  });
  const worst = line("balancedness: worst layer", series.worst);
  if (typeof threshold === "number") {
    worst.markLine = {
      symbol: "none",
      label: { formatter: "threshold" },
      data: [{ yAxis: threshold, name: "balancer threshold" }],
    };
  }
  return {
    animation: false,
    grid: { left: 44, right: 16, top: 32, bottom: 28 },
    legend: { top: 0 },
    tooltip: { trigger: "axis" },
    xAxis: { type: "time" },
    yAxis: { type: "value", min: 0, max: 1 },
    series: [
      line("balancedness: pool", series.pool),
      worst,
      line("expert skew: top-10 % share", series.skew),
    ],
  };
}

/** Replicas per expert of one layer (bars). */
export function replicaCountOption(counts) {
  return {
    animation: false,
    grid: { left: 36, right: 16, top: 8, bottom: 40 },
    tooltip: { trigger: "axis" },
    xAxis: { type: "category", ...axisName("expert", "x"), data: expertLabels(counts.length) },
    yAxis: { type: "value", minInterval: 1, name: "replicas" },
    series: [{ id: "replica-count", type: "bar", data: counts }],
  };
}
