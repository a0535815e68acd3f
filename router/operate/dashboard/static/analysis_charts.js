/**
 * @module Data shaping and ECharts options for the Analysis page. Pure: API JSON in,
 * chart options out (no DOM), so it runs under Deno in tests. Request types and every
 * other API string reach the page only as canvas text or escaped tooltip text.
 */
import { escapeHtml } from "./dom.js";
import { formatNumber, formatTime } from "./page_model.js";

import { HEAT_COLOURS } from "./heat_scale.js";

function lineSeries(name, buckets, values) {
  return {
    name,
    type: "line",
    showSymbol: false,
    connectNulls: false,
    data: buckets.map((at, i) => [at, values[i] ?? null]),
  };
}

/** An axis tooltip listing each series' value at the hovered time, escaped. */
function axisTooltip(digits, unit) {
  return {
    trigger: "axis",
    formatter: (params) => {
      const list = Array.isArray(params) ? params : [params];
      const at = list[0]?.value?.[0];
      const lines = list.map((p) =>
        escapeHtml(`${p.seriesName}: ${formatNumber(p.value?.[1], digits)}${unit}`)
      );
      return [escapeHtml(formatTime(at)), ...lines].join("<br>");
    },
  };
}

/** Top-N expert lines (and the layer total) of one layer from `/api/analysis/activation`. */
export function activationOption(body, layer) {
  const entry = body.layers.find((l) => l.layer === layer) ?? body.layers[0];
  // The layer total is tens of times any one expert: it gets its own (right) axis so
  // the top-N lines keep their scale.
  const series = entry
    ? [
      {
        ...lineSeries("all experts (right axis)", body.buckets, entry.total_tokens),
        yAxisIndex: 1,
        lineStyle: { type: "dashed" },
      },
      ...entry.top.map((hot) => lineSeries(`expert ${hot.expert}`, body.buckets, hot.series)),
    ]
    : [];
  return {
    animation: false,
    grid: { left: 56, right: 64, top: 40, bottom: 28 },
    legend: { top: 0, type: "scroll" },
    tooltip: axisTooltip(1, " tokens"),
    xAxis: { type: "time" },
    yAxis: [
      { type: "value", name: "tokens / bucket (top experts)" },
      { type: "value", name: "all experts", splitLine: { show: false } },
    ],
    series,
  };
}

/** Request types × experts cells of one layer: `{types, experts, data: [expert, y, share]}`. */
export function correlationCells(body, layer) {
  const types = body.request_types.map((t) => t.request_type);
  const data = [];
  body.request_types.forEach((type, y) => {
    const shares = type.layers.find((l) => l.layer === layer)?.shares ?? [];
    shares.forEach((share, expert) => data.push([expert, y, share]));
  });
  return { types, experts: body.experts, data };
}

/** Request types × experts heatmap (share of each type's selections) for one layer. */
export function correlationOption(body, layer) {
  const cells = correlationCells(body, layer);
  // Colour scale relative to the data: shares are small when a type spreads over many
  // experts, and a fixed 0–1 scale washes them out.
  const max = Math.max(0, ...cells.data.map((cell) => cell[2]));
  return {
    animation: false,
    grid: { left: 96, right: 110, top: 8, bottom: 40 },
    tooltip: {
      formatter: (p) => {
        const [expert, y, share] = p.data;
        return escapeHtml(
          `${cells.types[y]}, layer ${layer}, expert ${expert}: ${
            (share * 100).toFixed(1)
          } % of its selections`,
        );
      },
    },
    xAxis: {
      type: "category",
      name: "expert",
      nameLocation: "middle",
      nameGap: 22,
      data: Array.from({ length: cells.experts }, (_, e) => String(e)),
      splitArea: { show: true },
    },
    yAxis: { type: "category", data: cells.types },
    visualMap: {
      type: "continuous",
      min: 0,
      max: max > 0 ? max : 1,
      calculable: true,
      right: 40,
      top: "middle",
      itemHeight: 120,
      text: ["share", ""],
      inRange: { color: HEAT_COLOURS },
      formatter: (value) => `${(value * 100).toFixed(1)} %`,
    },
    series: [{ id: "correlation", type: "heatmap", data: cells.data, progressive: 0 }],
  };
}

/** Pool and per-backend tokens/s, with pool utilisation on a second axis. */
export function efficiencyOption(body) {
  const series = [
    lineSeries("pool tokens/s", body.buckets, body.pool.tokens_s),
    ...body.backends.map((b) => lineSeries(`${b.backend} tokens/s`, body.buckets, b.tokens_s)),
    {
      ...lineSeries("pool utilisation %", body.buckets, body.pool.utilisation.map(percentOrNull)),
      yAxisIndex: 1,
      lineStyle: { type: "dashed" },
    },
  ];
  if (body.pool.tokens_per_joule.some((v) => v !== null)) {
    series.push({
      ...lineSeries("pool tokens/J", body.buckets, body.pool.tokens_per_joule),
      yAxisIndex: 0,
    });
  }
  return {
    animation: false,
    grid: { left: 56, right: 48, top: 40, bottom: 28 },
    legend: { top: 0, type: "scroll" },
    tooltip: axisTooltip(2, ""),
    xAxis: { type: "time" },
    yAxis: [{ type: "value", name: "tokens/s" }, { type: "value", name: "%", min: 0, max: 100 }],
    series,
  };
}

function percentOrNull(value) {
  return value === null || value === undefined ? null : value * 100;
}

/** Expert skew: top-10 % share and CV (means over layers) per bucket. */
export function balanceOption(body) {
  const buckets = body.buckets.map((b) => b.at);
  return {
    animation: false,
    grid: { left: 44, right: 44, top: 40, bottom: 28 },
    legend: { top: 0 },
    tooltip: axisTooltip(3, ""),
    xAxis: { type: "time" },
    yAxis: [{ type: "value", min: 0, max: 1 }, { type: "value", name: "CV", min: 0 }],
    series: [
      lineSeries("top 10 % share", buckets, body.buckets.map((b) => b.top10_share)),
      { ...lineSeries("CV", buckets, body.buckets.map((b) => b.cv)), yAxisIndex: 1 },
    ],
  };
}
