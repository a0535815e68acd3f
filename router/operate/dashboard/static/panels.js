/**
 * @module The dashboard's tables (node resources, alerts, plan), built with text nodes
 * only. Rows carry `data-*` attributes so tests and scripts can find them.
 */
import { el, replaceChildren } from "./dom.js";
import { alertRows, formatNumber, formatPercent, planView, resourceRows } from "./page_model.js";

const RESOURCE_COLUMNS = [
  ["backend", "backend"],
  ["state", "state"],
  ["provider", "provider"],
  ["utilisation", "executor util."],
  ["slots", "slots"],
  ["cpuCores", "CPU cores"],
  ["memory", "memory (RSS)"],
  ["netRx", "net rx"],
  ["netTx", "net tx"],
  ["acceleratorUtil", "accel. util."],
  ["acceleratorMemory", "accel. memory"],
  ["power", "power"],
  ["tokensS", "tokens/s"],
  ["inFlight", "in flight"],
  ["coldStarts", "cold starts"],
  ["coldStartsPerMin", "cold starts/min (last min)"],
];

function header(columns) {
  return el("thead", {}, el("tr", {}, ...columns.map(([, title]) => el("th", {}, title))));
}

/** Fills `#resources-table` from `load.backends`. */
export function renderResources(table, load) {
  const rows = resourceRows(load).map((row) =>
    el(
      "tr",
      { "data-backend": row.backend, "data-stale": String(row.stale) },
      ...RESOURCE_COLUMNS.map(([key]) => el("td", { "data-field": key }, row[key])),
    )
  );
  replaceChildren(table, header(RESOURCE_COLUMNS), el("tbody", {}, ...rows));
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
  replaceChildren(
    perBackend,
    header([
      ["backend", "backend"],
      ["hosted", "experts hosted (all layers)"],
      ["bytes", "bytes (plan)"],
      ["resident", "warm now / budget"],
      ["moved", "moved since last plan"],
      ["experts", `layer ${layer}: hosted`],
      ["replicated", "replicated elsewhere"],
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
            el("details", {}, el("summary", {}, "expert ids"), row.list),
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
