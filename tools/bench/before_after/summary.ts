/**
 * @module The before/after's `summary.md`, pure: the results header, what each
 * configuration does, item 6's targets with their measured values and met / not met, then
 * per executor the seed's five metrics before (static) and after (switchyard), every
 * configuration's capacity, the rate sweep and the shift phase — each figure the mean over
 * seeds with its range `[min–max]` — and the demo-model check.
 */
import type { PlacementConfig } from "./configs.ts";
import { type RunOutcome, type Spread, spreadOf } from "./outcome.ts";
import type { TargetRow } from "./targets.ts";

/** One executor's part of the summary. */
export interface ExecutorSection {
  /** `simulated` or `onnx`. */
  name: string;
  /** What the executor is, with its device time and provenance. */
  label: string;
  sloMs: number;
  /** How the SLO was set. */
  sloSource: string;
  outcomes: RunOutcome[];
  targets: TargetRow[];
}

/** Everything the summary shows. */
export interface SummaryInput {
  /** `resultsHeader()` lines. */
  header: readonly string[];
  /** Facts of the run, one bullet each. */
  notes: readonly string[];
  configs: readonly PlacementConfig[];
  executors: readonly ExecutorSection[];
  demo: { label: string; outcomes: RunOutcome[]; target: TargetRow } | null;
  /** Runs that failed (the others went on), in words. */
  failures?: readonly string[];
  /** Closing remarks on how to read it. */
  reading: readonly string[];
}

function num(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "n/a";
}

/** `mean [min–max]` (just the mean for one seed). */
export function fmtSpread(spread: Spread, digits: number, unit = ""): string {
  if (spread.n === 0) return "n/a";
  const mean = `${num(spread.mean, digits)}${unit}`;
  return spread.n === 1 ? mean : `${mean} [${num(spread.min, digits)}–${num(spread.max, digits)}]`;
}

/** A markdown table; the first `text` columns (and any listed in `textAt`) align left. */
function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  text = 1,
  textAt: readonly number[] = [],
): string[] {
  const left = (i: number) => i < text || textAt.includes(i);
  return [
    `| ${header.join(" | ")} |`,
    `|${header.map((_, i) => (left(i) ? "---" : "---:")).join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ];
}

function metOf(row: TargetRow): string {
  if (row.met === null) return "n/a";
  return `${row.met ? "**met**" : "**not met**"} (${row.seedsMet}/${row.perSeed.length} seeds)`;
}

/** The configs of `outcomes`, in first-seen order. */
function configsOf(outcomes: readonly RunOutcome[]): string[] {
  return [...new Set(outcomes.map((o) => o.config))];
}

function over(
  outcomes: readonly RunOutcome[],
  config: string,
  pick: (o: RunOutcome) => number | null,
): Spread {
  return spreadOf(outcomes.filter((o) => o.config === config).map(pick));
}

function fiveMetrics(section: ExecutorSection): string[] {
  const configs = configsOf(section.outcomes);
  const rows: [string, (o: RunOutcome) => number | null, number][] = [
    ["throughput at saturation (tokens/s)", (o) => o.saturation.tokensPerS, 0],
    ["mean latency over the shift phase (ms)", (o) => o.shift?.mean ?? null, 1],
    ["error rate (non-200 ÷ sent, measured phases)", (o) => o.errorRate, 4],
    ["load std ÷ mean across backends (CV, shift phase)", (o) => o.backendCv, 3],
    ["load std ÷ mean across expert replicas (CV, shift phase)", (o) => o.replicaCv, 3],
    ["backend utilisation: device busy, mean (shift phase)", (o) => o.busyMean, 3],
    ["backend utilisation: device busy, busiest backend (shift phase)", (o) => o.busyMax, 3],
  ];
  const ratio = (pick: (o: RunOutcome) => number | null) => {
    const staticBy = new Map(
      section.outcomes.filter((o) => o.config === "static").map((o) => [o.seed, pick(o)]),
    );
    return spreadOf(
      section.outcomes.filter((o) => o.config === "switchyard").map((o) => {
        const before = staticBy.get(o.seed);
        const after = pick(o);
        return before === undefined || before === null || after === null || !(before > 0)
          ? null
          : after / before;
      }),
    );
  };
  return table(
    ["metric (before = static, after = switchyard)", ...configs, "after ÷ before"],
    rows.map(([name, pick, digits]) => [
      name,
      ...configs.map((c) => fmtSpread(over(section.outcomes, c, pick), digits)),
      fmtSpread(ratio(pick), 2, "×"),
    ]),
  );
}

function capacityTable(outcomes: readonly RunOutcome[]): string[] {
  const pct = (v: number) => 100 * v;
  return table(
    [
      "config",
      "idle p50 / p99 (ms)",
      "saturation req/s",
      "tokens/s",
      "p99 (ms)",
      "device busy at saturation: busiest / mean (%)",
      "cores: router / backends / load generator",
      "plan switches (measured phases; by action/trigger, all seeds)",
      "time in plan switches: s (% of the measured time), MiB moved",
      "EPLB re-plans (switch time, share of the measured time)",
      "pool start / warm-up (s)",
    ],
    configsOf(outcomes).map((c) => {
      const s = (pick: (o: RunOutcome) => number | null) => over(outcomes, c, pick);
      return [
        c,
        `${fmtSpread(s((o) => o.idle.p50), 1)} / ${fmtSpread(s((o) => o.idle.p99), 1)}`,
        fmtSpread(s((o) => o.saturation.throughputRps), 1),
        fmtSpread(s((o) => o.saturation.tokensPerS), 0),
        fmtSpread(s((o) => o.saturation.p99), 0),
        `${fmtSpread(s((o) => pct(o.saturationBusyMax)), 0)} / ${
          fmtSpread(s((o) => pct(o.saturationBusyMean)), 0)
        }`,
        [
          s((o) => o.saturationCores.router),
          s((o) => o.saturationCores.backends),
          s((o) => o.saturationCores.generator),
        ].map((x) => num(x.mean, 2)).join(" / "),
        switchCell(outcomes.filter((o) => o.config === c)),
        `${fmtSpread(s((o) => o.switchingS), 1)} (${
          num(100 * s((o) => o.switchingShareAll).mean, 0)
        } %), ${fmtSpread(s((o) => o.movedMb), 0)}`,
        c === "eplb-10min"
          ? `${fmtSpread(s((o) => o.replans), 1)} (${num(s((o) => o.replanMs).mean / 1000, 1)} s ` +
            `each, ${num(100 * s((o) => o.switchingShare).mean, 0)} % of the time; ` +
            `${num(s((o) => o.replansSkipped).mean, 1)} periods skipped while switching)`
          : "–",
        `${fmtSpread(s((o) => o.startupS), 1)} / ${fmtSpread(s((o) => o.warmedS), 0)}`,
      ];
    }),
  );
}

/** `mean [min–max] (action/trigger n, …)` of the switches of `outcomes`. */
function switchCell(outcomes: readonly RunOutcome[]): string {
  const by: Record<string, number> = {};
  for (const o of outcomes) {
    for (const [key, n] of Object.entries(o.switchesBy)) by[key] = (by[key] ?? 0) + n;
  }
  const parts = Object.entries(by).map(([key, n]) => `${key} ${n}`).join(", ");
  return `${fmtSpread(spreadOf(outcomes.map((o) => o.switches)), 1)}${parts ? ` (${parts})` : ""}`;
}

/** Phase starts, mix changes and plan switches of the first seed's runs, on one clock. */
function timelines(outcomes: readonly RunOutcome[]): string[] {
  const seed = Math.min(...outcomes.map((o) => o.seed));
  const first = outcomes.filter((o) => o.seed === seed);
  const phases = first[0]?.timeline.phases ?? [];
  const lines = [
    `Seed ${seed}, seconds after the warm-up. Phases: ${
      phases.map((p) => `${p.name} ${p.startS.toFixed(0)}`).join(", ")
    }; the mix changes at ${
      (first[0]?.timeline.mixesAtS ?? []).map((t) => t.toFixed(0)).join(" and ") || "–"
    }.`,
    "",
  ];
  for (const o of first) {
    const switches = o.timeline.switches.map((s) =>
      `${s.atS.toFixed(1)} ${s.action}${s.moved > 0 ? ` (${s.moved} moved)` : ""}`
    );
    lines.push(`- ${o.config}: ${switches.length === 0 ? "no plan switch" : switches.join("; ")}`);
  }
  return lines;
}

function sweepTable(outcomes: readonly RunOutcome[], sloMs: number): string[] {
  const fractions = [...new Set(outcomes.flatMap((o) => o.sweep.map((s) => s.fraction)))]
    .sort((a, b) => a - b);
  const rows = fractions.flatMap((fraction) =>
    configsOf(outcomes).map((c) => {
      const s = (pick: (m: RunOutcome["sweep"][number]) => number) =>
        over(outcomes, c, (o) => {
          const point = o.sweep.find((p) => Math.abs(p.fraction - fraction) < 1e-3);
          return point === undefined ? null : pick(point);
        });
      return [
        `${fraction}×`,
        c,
        fmtSpread(s((p) => p.offeredRps), 1),
        fmtSpread(s((p) => p.measure.throughputRps), 1),
        `${fmtSpread(s((p) => p.measure.p50), 0)} / ${fmtSpread(s((p) => p.measure.p90), 0)} / ${
          fmtSpread(s((p) => p.measure.p99), 0)
        }`,
        fmtSpread(s((p) => p.measure.mean), 0),
        fmtSpread(s((p) => p.measure.goodRps), 1),
        fmtSpread(s((p) => 100 * p.measure.attainment), 0),
      ];
    })
  );
  return table(
    [
      "rate (× static capacity)",
      "config",
      "offered req/s",
      "served req/s",
      "p50 / p90 / p99 (ms)",
      "mean (ms)",
      `goodput (req/s ≤ ${num(sloMs, 0)} ms)`,
      "SLO attainment (%)",
    ],
    rows,
    2,
  );
}

function shiftTable(outcomes: readonly RunOutcome[]): string[] {
  const mixes = Math.max(0, ...outcomes.map((o) => o.shiftByMix.length));
  return table(
    [
      "config",
      "goodput (req/s)",
      "SLO attainment (%)",
      "p50 / p90 / p99 (ms)",
      "mean (ms)",
      ...Array.from({ length: mixes }, (_, i) => `goodput, mix ${i} (req/s)`),
      "plan switches",
    ],
    configsOf(outcomes).map((c) => {
      const s = (pick: (o: RunOutcome) => number | null) => over(outcomes, c, pick);
      return [
        c,
        fmtSpread(s((o) => o.shift?.goodRps ?? null), 1),
        fmtSpread(s((o) => o.shift === null ? null : 100 * o.shift.attainment), 0),
        `${fmtSpread(s((o) => o.shift?.p50 ?? null), 0)} / ${
          fmtSpread(s((o) => o.shift?.p90 ?? null), 0)
        } / ${fmtSpread(s((o) => o.shift?.p99 ?? null), 0)}`,
        fmtSpread(s((o) => o.shift?.mean ?? null), 0),
        ...Array.from(
          { length: mixes },
          (_, i) => fmtSpread(s((o) => o.shiftByMix[i]?.goodRps ?? null), 1),
        ),
        fmtSpread(s((o) => o.switches), 1),
      ];
    }),
  );
}

function targetTable(rows: readonly { executor: string; row: TargetRow }[]): string[] {
  return table(
    ["target", "executor", "goal", "measured: mean [min–max] over seeds", "met?", "how"],
    rows.map(({ executor, row }) => [
      row.target,
      executor,
      row.goal,
      fmtSpread(row.ratio, 2, "×"),
      metOf(row),
      row.detail,
    ]),
    2,
    [4, 5],
  );
}

/** The whole `summary.md`. */
export function summaryMarkdown(input: SummaryInput): string {
  const lines = [
    "# Switchyard before/after: placement alone (issue 26, item 6)",
    "",
    ...input.header,
    ...input.notes.map((note) => `- ${note}`),
    "",
    "## The configurations (they differ only in placement)",
    "",
    ...table(
      ["config", "placement"],
      input.configs.map((c) => [c.name, c.placement]),
      2,
    ),
    "",
    "## Targets (item 6)",
    "",
    ...targetTable([
      ...input.executors.flatMap((e) => e.targets.map((row) => ({ executor: e.name, row }))),
      ...(input.demo ? [{ executor: "onnx, demo model", row: input.demo.target }] : []),
    ]),
    "",
  ];
  for (const section of input.executors) {
    lines.push(
      `## ${section.name}: ${section.label}`,
      "",
      `SLO: ${num(section.sloMs, 0)} ms per request (${section.sloSource}).`,
      "",
      "### The seed's five metrics, before and after",
      "",
      ...fiveMetrics(section),
      "",
      "### Capacity and idle latency",
      "",
      ...capacityTable(section.outcomes),
      "",
      "### Rate sweep (open loop, first mix)",
      "",
      ...sweepTable(section.outcomes, section.sloMs),
      "",
      "### Shift phase (one compressed hour; the hot experts move)",
      "",
      ...shiftTable(section.outcomes),
      "",
      "### Plan switches over time",
      "",
      ...timelines(section.outcomes),
      "",
    );
    const kinds = configsOf(section.outcomes).map((c) => {
      const merged: Record<string, number> = {};
      for (const o of section.outcomes.filter((x) => x.config === c)) {
        for (const [kind, n] of Object.entries(o.errorKinds)) {
          merged[kind] = (merged[kind] ?? 0) + n;
        }
      }
      const text = Object.entries(merged).map(([k, n]) => `${k}: ${n}`).join(", ");
      return `${c}: ${text || "none"}`;
    });
    lines.push(`Errors by kind (all seeds) — ${kinds.join("; ")}.`, "");
  }
  if (input.demo !== null) {
    lines.push(
      `## Demo model: ${input.demo.label}`,
      "",
      ...capacityTable(input.demo.outcomes),
      "",
    );
  }
  if ((input.failures ?? []).length > 0) {
    lines.push(
      "## Failed runs",
      "",
      "Left out of every figure above:",
      "",
      ...input.failures!.map((f) => `- ${f}`),
      "",
    );
  }
  if (input.reading.length > 0) {
    lines.push("## Reading it", "", ...input.reading.map((line) => `- ${line}`), "");
  }
  return lines.join("\n");
}
