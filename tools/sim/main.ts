// deno-lint-ignore-file no-console
/**
 * @module `deno task sim`: the discrete-event simulator over the production control code.
 * Simulates a compressed day per scale × scenario × placement policy and prints (and
 * with `--out` writes) the parameter provenance and the comparison table. The same seed
 * and options print the same output (wall-clock planner times only with `--timings`).
 */
import { dirname } from "node:path";
import { parseCli } from "../cli/cli_args.ts";
import { PLACEMENT_POLICIES, type PlacementPolicy, type SimResult } from "./engine.ts";
import { HARDWARE } from "./params.ts";
import {
  balanceOverTime,
  type ComparisonRow,
  evaluationsTable,
  hourlyCsv,
  prewarmTable,
  provenanceTable,
  resultsTable,
  traceCsv,
} from "./report.ts";
import { affinityFor, COMPARISON, defaultSettings, detectSampling, runComparison } from "./run.ts";
import { peakRate, type Scale, SCALE_NAMES, SCALES } from "./scales.ts";
import { demoScale } from "./demo_scale.ts";
import { SCENARIOS } from "./workload.ts";

const { values } = parseCli({
  name: "deno task sim",
  summary: "Discrete-event simulation in virtual time of a pool of accelerators over a " +
    "compressed day,\ndriving Switchyard's production routing, batching, balancer, planner " +
    "and pre-warm code.\nCompares placement policies per scale and scenario.",
  options: {
    scale: {
      type: "string",
      default: "256x32",
      value: "<name,…|all>",
      description: "pools to simulate (see Scales below)",
    },
    scenario: {
      type: "string",
      default: "all",
      value: "<name,…|all>",
      description: "compressed days to simulate (see Scenarios below)",
    },
    policy: {
      type: "string",
      default: "all",
      value: "<name,…|all>",
      description: "placement policies (see Policies below; static always runs first)",
    },
    memory: {
      type: "string",
      default: "ample",
      value: "<ample|tight|both>",
      description: "expert memory per accelerator: profile figure, or 5 % over the plan",
    },
    seed: { type: "string", default: "1", value: "<n>", description: "random seed" },
    day: {
      type: "string",
      value: "<s>",
      description: "virtual seconds the compressed day lasts (default per scale)",
    },
    out: {
      type: "string",
      value: "<file.md>",
      description: "also write the report there (and the hourly CSV beside it)",
    },
    threshold: {
      type: "string",
      value: "<t,…>",
      description: "also run the Switchyard balancer with these TUNED thresholds (labelled rows)",
    },
    "raw-detection": {
      type: "boolean",
      default: false,
      description: "the balancer's load rounds as the compressed day samples them (no 1/√C " +
        "noise scaling; shows that artefact)",
    },
    trace: {
      type: "string",
      value: "<file.csv>",
      description: "write every balancer evaluation of the Switchyard runs there",
    },
    timings: {
      type: "boolean",
      default: false,
      description: "add wall-clock planner time per re-plan (not reproducible)",
    },
    smoke: {
      type: "boolean",
      default: false,
      description: "a 12-virtual-second day (tests)",
    },
  },
  epilog: [
    "Scales:",
    ...Object.values(SCALES).map((s) => `  ${s.name.padEnd(9)} ${s.description}`),
    "  demo      the demo model on 2 accelerators, a and b measured here (onnxruntime)",
    "Scenarios:",
    ...Object.values(SCENARIOS).map((s) => `  ${s.name.padEnd(9)} ${s.description}`),
    "Policies:",
    "  static              static placement (contiguous expert blocks), never moved",
    "  eplb                DeepSeek EPLB greedy re-placement every 10 day-minutes",
    "  sglang              EPLB greedy every 1,000 steps, applied synchronously",
    "  switchyard          Switchyard's balancer, default config",
    "  switchyard-prewarm  the same plus the pre-warm job (forecast + scheduled events)",
    "  switchyard-tuned    TUNED, not the default: the balancer with threshold 0.95 (name it",
    "                      explicitly; `all` does not include it)",
  ],
});

const list = (value: string, all: readonly string[]) =>
  value === "all" ? [...all] : value.split(",").map((v) => v.trim()).filter(Boolean);
const scaleNames = list(values.scale, SCALE_NAMES.filter((n) => n !== "demo"));
const scenarioNames = list(values.scenario, Object.keys(SCENARIOS));
const KNOWN_POLICIES: readonly string[] = [...PLACEMENT_POLICIES, "switchyard-tuned"];
const policies = [
  "static",
  ...values.policy.split(",").map((p) => p.trim()).filter((p) => p !== "" && p !== "static")
    .flatMap((p) => (p === "all" ? PLACEMENT_POLICIES.filter((q) => q !== "static") : [p])),
] as PlacementPolicy[];
const memories = values.memory === "both" ? ["ample", "tight"] : [values.memory];
const thresholds = values.threshold === undefined
  ? []
  : values.threshold.split(",").map((v) => Number(v.trim()));
const seed = Number(values.seed);
const problems = [
  ...scaleNames.filter((n) => !SCALE_NAMES.includes(n)).map((n) => `unknown scale "${n}"`),
  ...scenarioNames.filter((n) => !(n in SCENARIOS)).map((n) => `unknown scenario "${n}"`),
  ...policies.filter((p) => !KNOWN_POLICIES.includes(p)).map((p) => `unknown policy "${p}"`),
  ...memories.filter((m) => m !== "ample" && m !== "tight").map((m) => `unknown memory "${m}"`),
  ...(Number.isInteger(seed) ? [] : [`--seed must be an integer, got "${values.seed}"`]),
  ...thresholds.filter((t) => !(t > 0 && t <= 1)).map((t) =>
    `--threshold values must be in (0, 1], got ${t}`
  ),
  ...(values.day !== undefined && !(Number(values.day) > 0)
    ? [`--day must be > 0, got "${values.day}"`]
    : []),
];
if (problems.length > 0) {
  console.error(`deno task sim: ${problems.join("; ")}\nRun "deno task sim --help".`);
  Deno.exit(2);
}

const command = ["deno task sim", ...Deno.args].join(" ");
const lines: string[] = [
  "# Simulated fleet: placement policies over a compressed day",
  "",
  `Command: \`${command}\``,
  "",
  "Virtual time; deterministic for a seed. Traffic patterns and control periods are " +
  "compressed with the day; device, network and weight-transfer times are not. " +
  "See docs/SIMULATION.md for what is and is not modelled.",
  "",
  "## Parameters and their provenance",
  "",
  ...provenanceTable("Hardware (published)", HARDWARE),
  ...provenanceTable("Comparison knobs (assumed)", COMPARISON),
  ...provenanceTable("Switchyard settings (the defaults, `resolveConfig()`)", defaultSettings()),
];
const rows: ComparisonRow[] = [];
const started = performance.now();
for (const name of scaleNames) {
  const scale: Scale = name === "demo" ? await demoScale() : SCALES[name]!;
  const dayS = values.smoke ? 12 : values.day !== undefined ? Number(values.day) : scale.dayS;
  const rate = peakRate(scale);
  lines.push(
    ...provenanceTable(`Scale ${scale.name}: ${scale.description}`, {
      ...scale.device,
      "request rows (min)": {
        value: scale.rowsMin,
        unit: "rows",
        provenance: "assumed",
        source: "uniform rows per request",
      },
      "request rows (max)": {
        value: scale.rowsMax,
        unit: "rows",
        provenance: "assumed",
        source: "uniform rows per request",
      },
      "requests per step (max)": {
        value: scale.batchMax,
        unit: "requests",
        provenance: "assumed",
        source: `the batcher's max (${scale.batchMax / scale.devices} per accelerator)`,
      },
      SLO: scale.sloMs,
      "load factor": scale.loadFactor,
      "peak rate": rate,
      "day length": {
        value: dayS,
        unit: "virtual s",
        provenance: "assumed",
        source: `compression ${(86_400 / dayS).toFixed(0)}×`,
      },
      "detection sampling": values["raw-detection"]
        ? {
          value: 1,
          unit: "× sampled deviation",
          provenance: "assumed",
          source: "--raw-detection: as the compressed day samples it (an artefact)",
        }
        : detectSampling(dayS),
    }),
  );
  const affinity = affinityFor(scale, seed);
  for (const scenarioName of scenarioNames) {
    for (const memory of memories) {
      const results: SimResult[] = await runComparison({
        scale,
        scenario: SCENARIOS[scenarioName]!,
        policies,
        seed,
        dayS,
        memory: memory as "ample" | "tight",
        affinity,
        trace: values.trace !== undefined,
        rawDetection: values["raw-detection"],
      });
      for (const threshold of thresholds) {
        const [tuned] = await runComparison({
          scale,
          scenario: SCENARIOS[scenarioName]!,
          policies: ["switchyard"],
          seed,
          dayS,
          memory: memory as "ample" | "tight",
          affinity,
          trace: values.trace !== undefined,
          rawDetection: values["raw-detection"],
          balancerOverride: { threshold },
        });
        results.push({ ...tuned!, label: `switchyard-threshold-${threshold} (TUNED)` });
      }
      rows.push({ scale: scale.name, scenario: scenarioName, memory, results });
    }
  }
}
lines.push(
  "## Results",
  "",
  "goodput = requests finished within the SLO per virtual second; balancedness = mean over " +
    "layers of mean ÷ max expert rows per accelerator, per sample (a day-minute, at least 250 virtual ms); share ≥ 0.95 excludes " +
    "the first adjust interval after each mix shift and event edge; event = the 5× event " +
    "window (first-min = its first day-minute); cold starts = expert loads on the critical " +
    "path (not in memory when a plan activated); GB moved = expert weights loaded.",
  "",
  ...resultsTable(rows, values.timings === true),
  "",
  "## Balancedness over the day",
  "",
  ...balanceOverTime(rows),
  "",
  "## The balancer's evaluations",
  "",
  "Every `evaluate_interval` (day-time) the production evaluation step ran once, unless a " +
    "switch was staging. balanced = worst layer ≥ threshold, not armed; confirming = below, " +
    "not yet armed; no better plan = armed, the planned placement gains nothing (or, in the " +
    "hysteresis band, less than its width); held = the gain is below `switch_gain` within " +
    "`adjust_interval` of the last switch; switch (gain ≥ switch_gain) = switched within it.",
  "",
  ...evaluationsTable(rows),
  "",
);
const prewarm = prewarmTable(rows);
if (prewarm.length > 0) {
  lines.push(
    "## The pre-warm job's runs",
    "",
    "One run per pre-warm interval: its trigger (none, overload, event_lead) and what it did " +
      "with the placement (switched: applied, the peak was due; warmed_ahead: warmed for the " +
      "placement of a peak not yet due, not applied; kept_current: the plan already fits).",
    "",
    ...prewarm,
    "",
  );
}
if (values.timings) {
  lines.push(`Wall time of the whole run: ${((performance.now() - started) / 1000).toFixed(1)} s.`);
  lines.push("");
}
const text = lines.join("\n");
console.log(text);
if (values.out !== undefined) {
  await Deno.mkdir(dirname(values.out), { recursive: true });
  await Deno.writeTextFile(values.out, text);
  await Deno.writeTextFile(values.out.replace(/\.md$/, "") + "-hourly.csv", hourlyCsv(rows));
}
if (values.trace !== undefined) {
  await Deno.mkdir(dirname(values.trace), { recursive: true });
  await Deno.writeTextFile(values.trace, traceCsv(rows));
}
