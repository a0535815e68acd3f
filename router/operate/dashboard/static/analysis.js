/**
 * @module The Analysis page: expert activation over time, the request type × expert
 * heatmap, efficiency and balance over a chosen range, from the four read-only
 * `/api/analysis/*` endpoints (polled every 10 s). Exposes `window.switchyardAnalysis`
 * (`charts`, `last` bodies, `renders`, `error`) for tests.
 */
import { byId, el, fillSelect, getJson, replaceChildren, setStatus, setText } from "./dom.js";
import { formatNumber, formatPercent, formatTime, NA } from "./page_model.js";
import {
  activationOption,
  balanceOption,
  correlationOption,
  efficiencyOption,
} from "./analysis_charts.js";

const REFRESH_MS = 10_000;
const state = { model: undefined, layer: 0, range: "1h", top: 5 };
const page = { charts: {}, last: {}, renders: 0, error: null };
globalThis.switchyardAnalysis = page;

function query(extra = {}) {
  const params = new URLSearchParams({ from: state.range, ...extra });
  if (state.model !== undefined) params.set("model", state.model);
  return params.toString();
}

/** Served or recorded models, from the `requests:<model>` series keys. */
async function models() {
  const { series } = await getJson("/api/series");
  return series.filter((key) => /^requests:[^:]+$/.test(key))
    .map((key) => decodeURIComponent(key.slice("requests:".length)));
}

function fact(term, value, name) {
  return [el("dt", {}, term), el("dd", { "data-fact": name }, value)];
}

function renderCorrelationTable(body) {
  const header = el(
    "tr",
    {},
    ...["request type", "selections", "concentration (mean)", `layer ${state.layer}`, "top expert"]
      .map((h) => el("th", {}, h)),
  );
  const rows = body.request_types.map((type) => {
    const layer = type.layers.find((l) => l.layer === state.layer);
    return el(
      "tr",
      { "data-type": type.request_type },
      el("td", {}, type.request_type),
      el("td", {}, formatNumber(type.selections, 0)),
      el("td", {}, formatNumber(type.concentration, 3)),
      el("td", {}, formatNumber(layer?.concentration, 3)),
      el(
        "td",
        {},
        layer?.top_expert === null || layer === undefined ? NA : String(layer.top_expert),
      ),
    );
  });
  replaceChildren(byId("correlation-table"), header, ...rows);
}

function render({ activation, correlation, efficiency, balance }) {
  const known = page.models ?? [];
  const models = known.includes(activation.model) ? known : [activation.model, ...known];
  fillSelect(byId("model-select"), models, activation.model);
  const layers = Array.from({ length: correlation.layers }, (_, l) => l);
  fillSelect(byId("layer-select"), layers, state.layer);

  page.charts.activation.setOption(activationOption(activation, state.layer), true);
  const layer = activation.layers.find((l) => l.layer === state.layer);
  setText(
    "activation-note",
    layer
      ? `${layer.experts} experts, buckets of ${activation.bucket_ms / 1000} s; hottest: ` +
        (layer.top.map((h) => `expert ${h.expert} (${formatPercent(h.share)})`).join(", ") ||
          "none yet")
      : "no expert load recorded for this layer yet",
  );

  page.charts.correlation.setOption(correlationOption(correlation, state.layer), true);
  setText(
    "correlation-note",
    correlation.request_types.length === 0
      ? "no typed requests recorded in this range (label traffic with parameters.request_type)"
      : "concentration: 0 = spread evenly over the experts, 1 = always the same expert",
  );
  renderCorrelationTable(correlation);

  page.charts.efficiency.setOption(efficiencyOption(efficiency), true);
  replaceChildren(
    byId("efficiency-facts"),
    ...fact("pool tokens/s", formatNumber(efficiency.pool.totals.tokens_s, 1), "tokens_s"),
    ...fact("pool utilisation", formatPercent(efficiency.pool.totals.utilisation), "utilisation"),
    ...fact(
      "tokens per joule",
      efficiency.tokens_per_joule === null ? NA : formatNumber(efficiency.tokens_per_joule, 3),
      "tokens_per_joule",
    ),
    ...fact("power", efficiency.power, "power"),
  );

  page.charts.balance.setOption(balanceOption(balance), true);
  replaceChildren(
    byId("balance-facts"),
    ...fact(
      "expert skew: top 10 % share (range)",
      formatPercent(balance.range.top10_share),
      "top10_share",
    ),
    ...fact("expert skew: CV (range)", formatNumber(balance.range.cv, 3), "cv"),
  );
}

async function refresh() {
  try {
    const [activation, correlation, efficiency, balance] = await Promise.all([
      getJson(
        `/api/analysis/activation?${query({ layer: String(state.layer), top: String(state.top) })}`,
      ),
      getJson(`/api/analysis/correlation?${query()}`),
      getJson(`/api/analysis/efficiency?from=${encodeURIComponent(state.range)}`),
      getJson(`/api/analysis/balance?${query()}`),
    ]);
    state.model ??= activation.model;
    page.last = { activation, correlation, efficiency, balance };
    render(page.last);
    page.renders++;
    page.error = null;
    document.body.dataset.renders = String(page.renders);
    setText("updated-at", formatTime(Date.now()));
    setStatus("live", "live");
  } catch (error) {
    page.error = String(error);
    setStatus("error", String(error.message ?? error));
  }
}

function onControls() {
  state.model = byId("model-select").value || undefined;
  state.layer = Number(byId("layer-select").value || 0);
  state.range = byId("range-select").value;
  const top = Number(byId("top-input").value);
  state.top = Number.isInteger(top) && top >= 1 && top <= 50 ? top : 5;
  void refresh();
}

async function main() {
  const src = document.querySelector('meta[name="switchyard-echarts"]').content;
  const echarts = await import(src);
  for (const name of ["activation", "correlation", "efficiency", "balance"]) {
    page.charts[name] = echarts.init(byId(`chart-${name}`), null, { renderer: "canvas" });
  }
  page.models = await models().catch(() => undefined);
  await refresh();
  for (const id of ["model-select", "layer-select", "range-select", "top-input"]) {
    byId(id).addEventListener("change", onControls);
  }
  globalThis.addEventListener(
    "resize",
    () => Object.values(page.charts).forEach((c) => c.resize()),
  );
  setInterval(() => void refresh(), REFRESH_MS);
}

main().catch((error) => {
  page.error = String(error);
  setStatus("error", `cannot load the analysis page: ${error}`);
});
