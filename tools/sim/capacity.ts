// deno-lint-ignore-file no-console
/**
 * @module `deno task sim:capacity`: the pre-warm comparison of `bench:prewarm` at fleet size
 * in virtual time (`capacity_fleet.ts`): 256 experts on H200-class accelerators, a pool
 * sized for the normal peak, a declared 5× event with its own mix needing ~144 of them,
 * backends that take ~3 minutes to start. Policies: Switchyard's production pre-warm job,
 * B1 reactive (queue depth), B2 forecast-only, B3 T−60 min, O oracle, no pre-warming.
 * Every constant with its provenance is printed; seeds' spread shown.
 */
import { parseCli } from "../cli/cli_args.ts";
import { LABELS, POLICIES, type PolicyName } from "../bench/prewarm_policies.ts";
import { comparisonTable, type RunMeasures, targetsTable } from "../bench/prewarm_report.ts";
import { formatTable, round } from "../bench/stats.ts";
import { resultsHeader } from "../bench/results_header.ts";
import { FLEET_PARAMS, type FleetResult, simulateFleet } from "./capacity_fleet.ts";
import { acceleratorParams, provenanceLines } from "./params.ts";

const { values } = parseCli({
  name: "deno task sim:capacity",
  summary:
    "The pre-warm comparison at fleet size (256 experts, DeepSeek-V3 shape, ~144 H200-class\n" +
    "accelerators at the event, 3-minute cold starts) in virtual time, production control code.",
  options: {
    seeds: { type: "string", default: "1,2,3", value: "<list>", description: "seeds" },
    policies: {
      type: "string",
      default: POLICIES.join(","),
      value: "<list>",
      description: "policies",
    },
    initial: {
      type: "string",
      default: "36",
      value: "<n>",
      description: "accelerators before the event",
    },
    multiplier: { type: "string", default: "5", value: "<x>", description: "the event's size" },
    before: { type: "string", default: "90", value: "<min>", description: "from T − this" },
    after: { type: "string", default: "90", value: "<min>", description: "until T + this" },
    hold: { type: "string", default: "10", value: "<min>", description: "scale-down hold" },
    short: { type: "boolean", default: false, description: "one seed, T−30…T+20 min" },
    out: { type: "string", value: "<file.md>", description: "write the results file" },
  },
});
const short = values.short === true;
const seeds = (short ? "1" : values.seeds).split(",").map(Number);
const policies = values.policies.split(",").map((p) => p.trim()) as PolicyName[];
for (const p of policies) {
  if (!POLICIES.includes(p)) throw new TypeError(`Cannot simulate: --policies: unknown "${p}"`);
}
const options = {
  initial: Number(values.initial),
  multiplier: Number(values.multiplier),
  eventMinutes: 60,
  beforeMin: Number(short ? 30 : values.before),
  afterMin: Number(short ? 20 : values.after),
  threshold: 0.8,
  holdMs: Number(values.hold) * 60_000,
};
const device = acceleratorParams(4, "h200");
const provenance = provenanceLines({
  ...FLEET_PARAMS,
  fixedMs: device.fixedMs,
  perRowMs: device.perRowMs,
});
console.log("sim:capacity parameters:\n" + provenance.map((l) => `  ${l}`).join("\n"));

const results = new Map<PolicyName, FleetResult[]>();
for (const seed of seeds) {
  for (const policy of policies) {
    const started = performance.now();
    const result = await simulateFleet({ ...options, policy, seed });
    results.set(policy, [...(results.get(policy) ?? []), result]);
    console.log(
      `  ${LABELS[policy]} (seed ${seed}): ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
}
const by = new Map<PolicyName, RunMeasures[]>(
  [...results].map(([p, list]) => [p, list.map((r) => r.measures)]),
);
const table = comparisonTable(policies, by, {
  unit: "accelerator",
  windowMin: Math.max(options.beforeMin, options.afterMin),
  expertLoads: "0 (by construction)",
});
console.log("\n" + table);
const checks = targetsTable(by);
console.log("\n" + checks);
const first = [...results].map(([p, list]) => [p, list[0]!] as const);
const steps = [];
for (let m = -Math.min(60, options.beforeMin); m <= options.afterMin; m += short ? 5 : 10) {
  steps.push(m);
}
const T = 2 * 86_400_000 + 20 * 3_600_000;
const timeline = formatTable(
  ["minute", ...first.map(([p]) => p)],
  steps.map((m) => [
    `${m >= 0 ? "T+" : "T"}${m}`,
    ...first.map(([, r]) => {
      const s = r.timeline.find((x) => x.at === T + m * 60_000);
      return s === undefined ? "-" : `${s.requested}/${s.ready}/${s.placed}`;
    }),
  ]),
);
console.log(
  `\naccelerators requested/ready/serving (in the plan in force), seed ${seeds[0]}:\n${timeline}`,
);
const sw = results.get("switchyard")?.[0];
const leadLine = sw?.lead
  ? `Switchyard's lead: ${round(sw.lead.leadMs / 60_000, 2)} min from a p95 cold start of ${
    round((sw.lead.coldStartMs ?? 0) / 60_000, 2)
  } min (20 earlier cold starts drawn from the assumed distribution); the event needs ${sw.eventAccelerators} accelerators`
  : "";
if (leadLine) console.log(`\n${leadLine}`);
if (values.out !== undefined) {
  const head = await resultsHeader({
    command: `deno task sim:capacity ${Deno.args.join(" ")}`.trim(),
    notes: [`virtual time; seeds ${seeds.join(", ")}`],
  });
  await Deno.writeTextFile(
    values.out,
    [
      "# Pre-warming at fleet size (simulator)",
      "",
      ...head,
      "",
      "Parameters:",
      "",
      ...provenance.map((l) => `- ${l}`),
      "",
      "```",
      table,
      "```",
      "",
      "```",
      checks,
      "```",
      "",
      "```",
      timeline,
      "```",
      "",
      leadLine,
      "",
    ].join("\n"),
  );
  console.log(`wrote ${values.out}`);
}
Deno.exit(0);
