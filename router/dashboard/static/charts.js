/**
 * @module ECharts options for the dashboard's charts. Heatmaps carry no per-cell labels
 * (unreadable at 256 experts): colour comes from a visualMap, exact values from the
 * tooltip, and wide axes get a dataZoom slider. Tooltip strings are escaped.
 */
import { escapeHtml } from "./dom.js";
import { formatNumber, formatTime } from "./page_model.js";

const HEAT_COLOURS = ["#f7fbff", "#c6dbef", "#6baed6", "#2171b5", "#fd8d3c", "#d94801", "#7f2704"];

/** Experts beyond which the expert axis gets a dataZoom slider. */
const ZOOM_EXPERTS = 64;

function expertLabels(count) {
  return Array.from({ length: count }, (_, e) => String(e));
}

function zoom(count, axis) {
  if (count <= ZOOM_EXPERTS) return [];
  const end = Math.min(100, (ZOOM_EXPERTS / count) * 100 * 2);
  const key = axis === "x" ? "xAxisIndex" : "yAxisIndex";
  const place = axis === "x" ? { height: 14, bottom: 4 } : { width: 12, left: 2 };
  return [
    { type: "slider", [key]: 0, start: 0, end, ...place, filterMode: "none" },
    { type: "inside", [key]: 0, start: 0, end, filterMode: "none" },
  ];
}

/** An axis name centred under (x) or beside (y) the axis, clear of the visualMap. */
function axisName(name, axis) {
  return axis === "x"
    ? { name, nameLocation: "middle", nameGap: 22 }
    : { name, nameLocation: "middle", nameGap: 30, nameRotate: 90 };
}

function visualMap(max, unit) {
  return {
    type: "continuous",
    min: 0,
    max: max > 0 ? max : 1,
    calculable: true,
    orient: "vertical",
    right: 4,
    top: "middle",
    itemHeight: 120,
    text: [unit, "0"],
    inRange: { color: HEAT_COLOURS },
  };
}

/** Layers × experts heatmap of one model. */
export function heatmapOption(view) {
  const layerLabels = view.layers.map((l) => `L${l}`);
  return {
    animation: false,
    grid: { left: 44, right: 72, top: 8, bottom: view.experts > ZOOM_EXPERTS ? 64 : 40 },
    tooltip: {
      formatter: (p) => {
        const [expert, y, value] = p.data;
        return escapeHtml(`layer ${view.layers[y]}, expert ${expert}: `) +
          `<b>${escapeHtml(formatNumber(value, 3))}</b> tokens/s`;
      },
    },
    xAxis: {
      type: "category",
      ...axisName("expert", "x"),
      data: expertLabels(view.experts),
      splitArea: { show: true },
    },
    yAxis: { type: "category", data: layerLabels, inverse: true },
    visualMap: visualMap(view.max, "tok/s"),
    dataZoom: zoom(view.experts, "x"),
    series: [{
      id: "expert-load",
      type: "heatmap",
      data: view.data,
      progressive: 0,
      label: { show: false },
    }],
  };
}

/** Experts × backends heatmap of one layer (tokens/s, or hosted 1/0 from the plan). */
export function replicaOption(view, layer) {
  const unit = view.kind === "rates" ? "tok/s" : "hosted";
  return {
    animation: false,
    grid: { left: 96, right: 72, top: 8, bottom: view.experts > ZOOM_EXPERTS ? 64 : 40 },
    tooltip: {
      formatter: (p) => {
        const [expert, y, value] = p.data;
        const what = view.kind === "rates"
          ? `${formatNumber(value, 3)} tokens/s`
          : "replica placed by the plan";
        return escapeHtml(`layer ${layer}, expert ${expert} on ${view.backends[y]}: ${what}`);
      },
    },
    xAxis: { type: "category", ...axisName("expert", "x"), data: expertLabels(view.experts) },
    yAxis: { type: "category", data: view.backends },
    visualMap: visualMap(view.max, unit),
    dataZoom: zoom(view.experts, "x"),
    series: [{ id: "replicas", type: "heatmap", data: view.data, progressive: 0 }],
  };
}

/** Experts × recent columns heatmap of one layer. */
export function timelineOption(view, layer, columnMs) {
  const labels = view.starts.map((s) => formatTime(s));
  return {
    animation: false,
    grid: { left: view.experts > ZOOM_EXPERTS ? 72 : 52, right: 72, top: 8, bottom: 28 },
    tooltip: {
      formatter: (p) => {
        const [x, expert, value] = p.data;
        return escapeHtml(
          `layer ${layer}, expert ${expert}, ${labels[x]} (+${columnMs / 1000} s): ` +
            `${formatNumber(value, 3)} tokens/s (mean)`,
        );
      },
    },
    xAxis: { type: "category", data: labels },
    yAxis: {
      type: "category",
      ...axisName("expert", "y"),
      data: expertLabels(view.experts),
      inverse: true,
    },
    visualMap: visualMap(view.max, "tok/s"),
    dataZoom: zoom(view.experts, "y"),
    series: [{ id: "timeline", type: "heatmap", data: view.data, progressive: 0 }],
  };
}

/** Balancedness trend lines (0..1). */
export function trendOption(series, predicted) {
  const line = (name, data) => ({
    name,
    type: "line",
    data,
    showSymbol: false,
    connectNulls: false,
  });
  const experts = line("experts (mean per layer)", series.experts);
  if (typeof predicted === "number") {
    experts.markLine = {
      symbol: "none",
      label: { formatter: "plan" },
      data: [{ yAxis: predicted, name: "plan prediction" }],
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
      line("backend utilisation", series.pool),
      line("backend tokens/s", series.tokens),
      experts,
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
