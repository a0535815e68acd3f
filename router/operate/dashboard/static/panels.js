/**
 * @module The dashboard's tables (node resources, alerts, plan), built with text nodes
 * only. Rows carry `data-*` attributes so tests and scripts can find them.
 */
import { el, replaceChildren } from "./dom.js";
import {
  alertRows,
  formatNumber,
  formatPercent,
  planView,
  resourceRows,
  shownColumns,
} from "./page_model.js";

/**
 * Node-resource columns, short enough for 1440 px; a column every row has as n/a (no
 * accelerator, no power reading) is left out.
 */
export const RESOURCE_COLUMNS = [
  ["backend", "backend"],
  ["state", "state"],
  ["reportAge", "report age"],
  ["saturation", "saturation"],
  ["queueDepth", "queue"],
  ["utilisation", "exec. util."],
  ["inFlight", "in flight"],
  ["tokensS", "tokens/s"],
  ["cpuCores", "CPU cores"],
  ["memory", "RSS"],
  ["net", "net rx / tx"],
  ["acceleratorUtil", "accel. util."],
  ["acceleratorMemory", "accel. memory"],
  ["power", "power"],
  ["provider", "provider"],
  ["coldStartsBoth", "cold starts (last min)"],
];

function header(columns) {
  return el("thead", {}, el("tr", {}, ...columns.map(([, title]) => el("th", {}, title))));
}

/** Fills `#resources-table` from `load.backends`; stale and down rows carry `data-state`. */
export function renderResources(table, load) {
  const data = resourceRows(load);
  const columns = shownColumns(RESOURCE_COLUMNS, data);
  const rows = data.map((row) =>
    el(
      "tr",
      { "data-backend": row.backend, "data-stale": String(row.stale), "data-state": row.stateKind },
      ...columns.map(([key]) => el("td", { "data-field": key }, row[key])),
    )
  );
  replaceChildren(table, header(columns), el("tbody", {}, ...rows));
}

const ALERT_COLUMNS = [
  ["state", "state"],
  ["kind", "kind"],
  ["subject", "subject"],
  ["since", "since"],
  ["resolved", "resolved"],
  ["value", "value vs threshold"],
  ["message", "message"],
];

/** Fills `#alerts-table`; says so when no alert source is wired or nothing alerts. */
export function renderAlerts(table, note, alerts) {
  const rows = alertRows(alerts);
  if (rows === null) {
    note.textContent = "Alerts are not available on this router.";
    replaceChildren(table);
    return;
  }
  const firing = rows.filter((r) => r.state === "firing").length;
  note.textContent = rows.length === 0
    ? "No alerts."
    : `${firing} firing, ${rows.length - firing} recently resolved.`;
  replaceChildren(
    table,
    header(ALERT_COLUMNS),
    el(
      "tbody",
      {},
      ...rows.map((row) =>
        el(
          "tr",
          { "data-alert-id": row.id, "data-kind": row.kind, "data-state": row.state },
          ...ALERT_COLUMNS.map(([key]) => el("td", { "data-field": key }, row[key])),
        )
      ),
    ),
  );
}

/** Fills the plan facts and the per-backend table; returns replicas per expert. */
export function renderPlan(facts, perBackend, plan, layer, load) {
  const view = planView(plan, layer, load);
  if (view === null) {
    replaceChildren(facts, el("dt", {}, "plan"), el("dd", {}, "no balancer on this router"));
    replaceChildren(perBackend);
    return [];
  }
  if (view.error !== undefined) {
    replaceChildren(facts, el("dt", {}, "plan"), el("dd", {}, view.error));
    replaceChildren(perBackend);
    return [];
  }
  replaceChildren(
    facts,
    ...view.facts.flatMap(([name, value]) => [
      el("dt", {}, name),
      el("dd", { "data-fact": name }, value),
    ]),
  );
  // Lists an operator opened stay open through the next update.
  const open = new Set(
    [...perBackend.querySelectorAll("tr[data-backend] details[open]")].map((d) =>
      d.closest("tr").dataset.backend
    ),
  );
  replaceChildren(
    perBackend,
    header([
      ["backend", "backend"],
      ["hosted", "experts (all layers)"],
      ["bytes", "plan bytes"],
      ["resident", "warm / budget"],
      ["moved", "moved"],
      ["experts", `L${layer} hosted`],
      ["replicated", "replicated"],
      ["list", "which"],
    ]),
    el(
      "tbody",
      {},
      ...view.perBackend.map((row) =>
        el(
          "tr",
          { "data-backend": row.backend },
          el("td", {}, row.backend),
          el("td", { "data-field": "hosted" }, row.hosted),
          el("td", { "data-field": "bytes" }, row.bytes),
          el("td", { "data-field": "resident" }, row.resident),
          el("td", { "data-field": "moved" }, row.moved),
          el("td", {}, String(row.experts)),
          el("td", { "data-field": "replicated" }, String(row.replicated)),
          // The ids only on demand: at 256 experts a list per backend is a wall of numbers.
          el(
            "td",
            { class: "wrap" },
            el(
              "details",
              open.has(row.backend) ? { open: "" } : {},
              el("summary", {}, "expert ids"),
              row.list,
            ),
          ),
        )
      ),
    ),
  );
  return view.replicasPerExpert;
}

const HOT_COLUMNS = [
  ["rank", "#"],
  ["part", "expert"],
  ["tokensS", "tokens/s"],
  ["share", "share of layer"],
  ["backends", "backends (replicas)"],
];

/** Fills `#hot-table` with the hottest experts (`hotExperts()` of page_model.js). */
export function renderHot(table, hot) {
  const rows = hot.map((h, i) =>
    el(
      "tr",
      { "data-layer": String(h.layer), "data-expert": String(h.expert) },
      el("td", { "data-field": "rank" }, String(i + 1)),
      el("td", { "data-field": "part" }, `L${h.layer} E${h.expert}`),
      el("td", { "data-field": "tokensS" }, formatNumber(h.tokensS, 3)),
      el("td", { "data-field": "share" }, formatPercent(h.share)),
      el(
        "td",
        { "data-field": "backends" },
        h.backends.length === 0 ? "n/a" : `${h.backends.join(", ")} (${h.replicas})`,
      ),
    )
  );
  replaceChildren(table, header(HOT_COLUMNS), el("tbody", {}, ...rows));
}
