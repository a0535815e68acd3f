/**
 * @module Markdown and CSV of simulator runs, pure: the parameter provenance block, the
 * scenario × policy table per scale, and the hourly series.
 */
import type { EvaluationOutcome, SimResult } from "./engine.ts";
import { type Param, provenanceLines } from "./params.ts";

/** One scale × scenario × memory setting and its results (first = static baseline). */
export interface ComparisonRow {
  scale: string;
  scenario: string;
  memory: string;
  results: SimResult[];
}

/** The provenance table of a set of parameters. */
export function provenanceTable(title: string, params: Record<string, Param>): string[] {
  return [
    `### ${title}`,
    "",
    "| parameter | value | provenance | source |",
    "|---|---:|---|---|",
    ...provenanceLines(params),
    "",
  ];
}

const fmt = (value: number | null | undefined, digits: number) =>
  value === null || value === undefined || !Number.isFinite(value) ? "n/a" : value.toFixed(digits);

/** The results table: one row per policy, ratios against the first (static) result. */
export function resultsTable(rows: readonly ComparisonRow[], timings: boolean): string[] {
  const header = [
    "scale",
    "scenario",
    "memory",
    "policy",
    "goodput/s",
    "× static",
    "p50 ms",
    "p99 ms",
    "shed %",
    "balancedness mean",
    "share ≥ 0.95",
    "event goodput/s",
    "event × static",
    "event p99 ms",
    "event 1st-min p99 ms",
    "switches",
    "cold starts",
    "GB moved",
    ...(timings ? ["planner ms/re-plan (wall)"] : []),
  ];
  const lines = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`];
  for (const row of rows) {
    const base = row.results[0]!;
    for (const r of row.results) {
      const planner = r.plannerMs.length > 0
        ? r.plannerMs.reduce((a, b) => a + b, 0) / r.plannerMs.length
        : null;
      const cells = [
        row.scale,
        row.scenario,
        row.memory,
        r.label ?? r.policy,
        fmt(r.goodputPerS, 0),
        base.goodputPerS > 0 ? `${fmt(r.goodputPerS / base.goodputPerS, 2)}×` : "n/a",
        fmt(r.p50Ms, 1),
        fmt(r.p99Ms, 1),
        fmt(r.arrived > 0 ? (100 * r.shed) / r.arrived : 0, 1),
        fmt(r.meanBalancedness, 3),
        fmt(r.shareAbove95, 3),
        fmt(r.event?.goodputPerS, 0),
        r.event && base.event && base.event.goodputPerS > 0
          ? `${fmt(r.event.goodputPerS / base.event.goodputPerS, 2)}×`
          : "n/a",
        fmt(r.event?.p99Ms, 1),
        fmt(r.event?.firstMinuteP99Ms, 1),
        String(r.switches),
        String(r.coldStarts),
        fmt(r.bytesMoved / 1e9, 1),
        ...(timings ? [fmt(planner, 1)] : []),
      ];
      lines.push(`| ${cells.join(" | ")} |`);
    }
  }
  return lines;
}

/** Hourly series CSV: goodput/s, balancedness and p99 per policy and day-hour. */
export function hourlyCsv(rows: readonly ComparisonRow[]): string {
  const lines = ["scale,scenario,memory,policy,hour,goodput_per_s,balancedness,p99_ms"];
  for (const row of rows) {
    for (const r of row.results) {
      for (const h of r.hourly) {
        lines.push(
          [
            row.scale,
            row.scenario,
            row.memory,
            r.label ?? r.policy,
            h.hour,
            fmt(h.goodputPerS, 1),
            fmt(h.balancedness, 4),
            fmt(h.p99Ms, 2),
          ].join(","),
        );
      }
    }
  }
  return lines.join("\n") + "\n";
}

/** One line of per-day-hour balancedness per policy (the "over time" view in text). */
export function balanceOverTime(rows: readonly ComparisonRow[]): string[] {
  const lines = [
    "| scale | scenario | memory | policy | balancedness by day-hour (00 … 23) |",
    "|---|---|---|---|---|",
  ];
  for (const row of rows) {
    for (const r of row.results) {
      const series = r.hourly.map((h) => fmt(h.balancedness, 2)).join(" ");
      lines.push(
        `| ${row.scale} | ${row.scenario} | ${row.memory} | ${r.label ?? r.policy} | ${series} |`,
      );
    }
  }
  return lines;
}

/** Outcomes of the balancer's evaluations, in table order. */
const OUTCOMES: readonly EvaluationOutcome[] = [
  "balanced",
  "confirming",
  "no better plan",
  "held",
  "switch",
  "switch (gain ≥ switch_gain)",
  "staging",
  "no load",
];

/**
 * The balancer's evaluations by outcome per Switchyard run (the trace in counts): why it
 * did or did not switch.
 */
export function evaluationsTable(rows: readonly ComparisonRow[]): string[] {
  const header = ["scale", "scenario", "memory", "policy", "evaluations", ...OUTCOMES];
  const lines = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`];
  for (const row of rows) {
    for (const r of row.results) {
      const total = Object.values(r.evaluations).reduce((a, b) => a + (b ?? 0), 0);
      if (total === 0) continue;
      const cells = [
        row.scale,
        row.scenario,
        row.memory,
        r.label ?? r.policy,
        String(total),
        ...OUTCOMES.map((o) => String(r.evaluations[o] ?? 0)),
      ];
      lines.push(`| ${cells.join(" | ")} |`);
    }
  }
  return lines;
}

/** The pre-warm job's runs per run with the job: `trigger: action` → count, one cell. */
export function prewarmTable(rows: readonly ComparisonRow[]): string[] {
  const lines = [
    "| scale | scenario | memory | policy | runs by trigger: action |",
    "|---|---|---|---|---|",
  ];
  for (const row of rows) {
    for (const r of row.results) {
      const runs = Object.entries(r.prewarmRuns).sort(([a], [b]) => a.localeCompare(b));
      if (runs.length === 0) continue;
      const cell = runs.map(([key, n]) => `${key} × ${n}`).join(", ");
      lines.push(
        `| ${row.scale} | ${row.scenario} | ${row.memory} | ${r.label ?? r.policy} | ${cell} |`,
      );
    }
  }
  return lines.length > 2 ? lines : [];
}

/** Every evaluation of the Switchyard runs (`--trace`), one CSV line each. */
export function traceCsv(rows: readonly ComparisonRow[]): string {
  const lines = ["scale,scenario,memory,policy,hour,worst_layer,armed,outcome,planned_worst_layer"];
  for (const row of rows) {
    for (const r of row.results) {
      for (const t of r.trace) {
        lines.push(
          [
            row.scale,
            row.scenario,
            row.memory,
            r.label ?? r.policy,
            fmt(t.hour, 4),
            fmt(t.worst, 4),
            t.armed,
            `"${t.outcome}"`,
            fmt(t.after, 4),
          ].join(","),
        );
      }
    }
  }
  return lines.join("\n") + "\n";
}
