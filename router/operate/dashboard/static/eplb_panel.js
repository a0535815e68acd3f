/**
 * @module The plan panel's "Placement and EPLB health" block: the balancer's choice between
 * full replication and expert parallelism with its inputs and predictions, and EPLB health
 * (switches, their duration, time since the last, weights moved, a due rebalance held and
 * why) — both from `GET /api/plan` (`placement`, `health`). `eplbFacts()` is pure (tested
 * under Deno); `renderEplb()` fills a `<dl>`.
 */
import { el, replaceChildren } from "./dom.js";
import { formatBytes, formatNumber, formatPercent } from "./page_model.js";

const NA = "n/a";

function seconds(value) {
  if (typeof value !== "number" || !Number.isFinite(value)) return NA;
  if (value < 1) return `${Math.round(value * 1000)} ms`;
  if (value < 120) return `${formatNumber(value, 1)} s`;
  return `${formatNumber(value / 60, 1)} min`;
}

function cost(estimate) {
  if (!estimate) return NA;
  return `${formatNumber(estimate.value, 4)} ms (${estimate.source})`;
}

function candidate(c) {
  if (!c) return NA;
  return `busiest ${formatNumber(c.busiest_backend_ms_per_s, 2)} ms/s, balancedness ${
    formatNumber(c.balancedness, 3)
  }, ${formatPercent(c.remote_row_share)} of rows cross`;
}

/** `[name, value, key]` rows of the block; `[]` without a balancer. */
export function eplbFacts(plan) {
  if (!plan || plan.error !== undefined || plan.health === undefined) return [];
  const rows = [];
  const p = plan.placement;
  if (p) {
    const slots = p.inputs.slots_per_backend;
    const fits = p.inputs.budgets.map((b) =>
      `${b.backend}: ${b.budget_bytes === null ? "no budget" : formatBytes(b.budget_bytes)} → ${
        b.experts_per_layer === null ? "all" : b.experts_per_layer
      }/${p.inputs.experts} per layer`
    ).join("; ");
    rows.push(
      ["placement", `${p.choice.replace("_", " ")} (${p.mode})`, "choice"],
      ["why", p.reason, "reason"],
      [
        "slots per backend",
        `expert parallel ${slots.expert_parallel}, full ${slots.full_replication}`,
        "slots",
      ],
      ["budgets", fits || NA, "budgets"],
      ["remote row", cost(p.inputs.remote_row_ms), "remote-row"],
      ["expert row", cost(p.inputs.expert_row_ms), "expert-row"],
      ["predicted now", candidate(p.predicted.current), "predicted-current"],
      ["predicted full replication", candidate(p.predicted.full_replication), "predicted-full"],
      ["predicted gain", p.predicted.gain === null ? NA : formatPercent(p.predicted.gain), "gain"],
      [
        "move to full",
        p.move === null
          ? NA
          : `${p.move.experts} experts, ${formatBytes(p.move.bytes)}, ~${seconds(p.move.seconds)}`,
        "move",
      ],
    );
  }
  const h = plan.health;
  const switched = h.rebalances.filter((r) =>
    r.outcome === "switched" || r.outcome === "activate_partial"
  )
    .reduce((n, r) => n + r.count, 0);
  const failed = h.rebalances.filter((r) =>
    ["stage_failed", "conflict", "error"].includes(r.outcome)
  )
    .reduce((n, r) => n + r.count, 0);
  const d = h.switch_duration_s;
  rows.push(
    ["rebalances", `${switched} switched, ${failed} failed`, "rebalances"],
    ["since last", seconds(h.seconds_since_last_rebalance), "since-last"],
    [
      "switch duration",
      d.count === 0 ? NA : `last ${seconds(d.last)}, mean ${seconds(d.sum / d.count)}`,
      "duration",
    ],
    ["weights moved", `${h.moved_experts} experts, ${formatBytes(h.moved_bytes)}`, "moved"],
    [
      "rebalance due",
      h.due === null
        ? "no"
        : `${h.due.stalled ? "STALLED " : ""}${
          seconds(h.due.seconds)
        }, held: ${h.due.reason} (${h.due.detail})`,
      "due",
    ],
  );
  return rows;
}

/** Fills `facts` (a `<dl>`) with {@linkcode eplbFacts}. */
export function renderEplb(facts, plan) {
  const rows = eplbFacts(plan);
  if (rows.length === 0) {
    replaceChildren(facts, el("dt", {}, "EPLB"), el("dd", {}, "no balancer on this router"));
    return;
  }
  replaceChildren(
    facts,
    ...rows.flatMap(([name, value, key]) => [
      el("dt", {}, name),
      el("dd", { "data-eplb": key }, value),
    ]),
  );
}
