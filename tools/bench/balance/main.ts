// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:balance`: how fast the balancer reacts to a skew step — from
 * the step to the new plan active on every backend and the measured balance recovered
 * (`balance/reaction.ts`), one pool per `adjust_interval`.
 *
 * Static placement vs the balancer under load, side by side, is `deno task bench`
 * (`before_after.ts`): it isolates placement on a budget pool, on both executors.
 *
 * `--executor onnx` runs the demo model on real onnxruntime Workers; `--executor
 * simulated` runs an assumed device time per execution (a + b·rows) so many backends can
 * behave like separate accelerators on this machine (outputs are not model outputs).
 */
import { join } from "node:path";
import { loadDemoTraffic } from "../../model/traffic.ts";
import { benchModelDir } from "../bench_model.ts";
import { formatTable, round } from "../stats.ts";
import { parseCli } from "../../cli/cli_args.ts";
import { measureReaction, type ReactionResult, RECOVERY_POLLS } from "./reaction.ts";

const { values } = parseCli({
  name: "deno task bench:balance",
  summary: "How fast the balancer reacts to a skew step: step → new plan active on every\n" +
    "backend → measured balance recovered, one pool per adjust_interval. (Static placement\n" +
    "vs the balancer under load is `deno task bench`.)",
  options: {
    phase: {
      type: "string",
      default: "reaction",
      value: "<reaction>",
      description: "the only phase (the compare phase moved to `deno task bench`)",
    },
    adjust: {
      type: "string",
      default: "10s,60s",
      value: "<list>",
      description: "reaction: adjust_interval values, one pool each",
    },
    "reaction-out": {
      type: "string",
      default: "docs/results/balance-reaction.md",
      value: "<file>",
      description: "reaction: markdown result to write",
    },
    threshold: {
      type: "string",
      default: "0.9",
      value: "<b>",
      description: "reaction: expert_balancer.threshold",
    },
    rate: {
      type: "string",
      default: "40",
      value: "<req/s>",
      description: "reaction: open-loop arrival rate",
    },
    settle: {
      type: "string",
      default: "20",
      value: "<s>",
      description: "reaction: seconds of balanced traffic before the step",
    },
    executor: {
      type: "string",
      default: "onnx",
      value: "<onnx|simulated>",
      description: "real onnxruntime Workers or simulated device time (assumed a + b·rows)",
    },
    backends: {
      type: "string",
      value: "<n>",
      description: "backend processes (default 2 for onnx, 8 for simulated)",
    },
    experts: {
      type: "string",
      default: "64",
      value: "<n>",
      description: "experts per layer of the generated simulated model",
    },
    model: {
      type: "string",
      value: "<dir>",
      description: "model directory (default models/demo, or a generated wide one when simulated)",
    },
    "fixed-ms": {
      type: "string",
      default: "1",
      value: "<ms>",
      description: "simulated device ms per execution",
    },
    "per-row-ms": {
      type: "string",
      default: "2",
      value: "<ms>",
      description: "simulated device ms per row",
    },
  },
});
if (values.phase !== "reaction") {
  console.error(
    `deno task bench:balance: --phase ${values.phase} is gone; static vs the balancer under ` +
      "load is `deno task bench`",
  );
  Deno.exit(2);
}
const simulated = values.executor === "simulated";
const backends = Number(values.backends ?? (simulated ? 8 : 2));

// The model: the demo model for onnx; a small wide one for simulated pools.
const modelDir = await benchModelDir({
  dir: values.model,
  simulated,
  experts: Number(values.experts),
  topK: 6,
});
const manifest = JSON.parse(await Deno.readTextFile(join(modelDir, "moe.json")));

const results: ReactionResult[] = [];
for (const adjust of values.adjust.split(",")) {
  results.push(
    await measureReaction({
      modelDir,
      dModel: manifest.d_model,
      modelName: manifest.name,
      traffic: await loadDemoTraffic(modelDir),
      backends,
      adjustInterval: adjust.trim(),
      threshold: Number(values.threshold),
      rate: Number(values.rate),
      settleS: Number(values.settle),
      env: simulated
        ? {
          SWITCHYARD_BACKEND__EXECUTOR: "simulated",
          SWITCHYARD_BACKEND__SIMULATED__FIXED_MS: values["fixed-ms"],
          SWITCHYARD_BACKEND__SIMULATED__PER_ROW_MS: values["per-row-ms"],
        }
        : {},
    }),
  );
}
const threshold = Number(values.threshold);
const header = [
  "adjust_interval",
  "step_type",
  "predicted_worst_under_step",
  "measured_worst_before",
  "below_threshold_s",
  "lowest_measured",
  "balancer_lowest",
  "switch_s",
  "balancer_worst_before_after",
  "recovered_s",
  "switches_while_balanced",
  "note",
];
const fmt = (v: number | null, digits = 3) => v === null ? "-" : String(round(v, digits));
const rows = results.map((r) => [
  r.adjustInterval,
  r.stepType,
  fmt(r.step?.predictedWorst ?? null),
  fmt(r.measuredBefore),
  fmt(r.dropS, 1),
  fmt(r.lowestMeasured),
  fmt(r.lowestSeenByBalancer),
  r.switchS === null ? "none" : fmt(r.switchS, 1),
  r.switched === null ? "-" : `${fmt(r.switched.before)} → ${fmt(r.switched.after)}`,
  fmt(r.recoveredS, 1),
  r.settleSwitches,
  (r.switched !== null
    ? r.recoveredS === null ? "switched; measured balance not recovered in 20 s" : "switched"
    : r.lowestMeasured !== null && r.lowestMeasured >= threshold
    ? "no switch needed: measured layers stayed at or above the threshold"
    : "no switch within adjust_interval + 40 s").replaceAll(",", ";"),
]);
const stepLine = results.map((r) =>
  `${r.adjustInterval}: "${r.stepType}" (${
    (r.step?.scores ?? []).map((s) => `${s.type} ${round(s.worst, 2)}`).join(", ")
  })`
).join("; ");
console.log(
  `bench:balance reaction — ${backends} backends, ${values.executor}, model ${manifest.name}, ` +
    `threshold ${values.threshold}, ${values.rate} req/s; step after ${values.settle} s of ` +
    `uniform types to the type the plan in force spreads worst: ${stepLine}`,
);
console.log("\n" + formatTable(header, rows));
await Deno.mkdir("out", { recursive: true });
await Deno.writeTextFile(
  "out/bench-balance-reaction.csv",
  [header, ...rows].map((r) => r.join(",")).join("\n") + "\n",
);
const md = [
  "# Balancer reaction: skew step → new plan active → balance recovered",
  "",
  `Command: \`deno task bench:balance ${Deno.args.join(" ")}\` (${new Date().toISOString()}).`,
  "",
  `${backends} backends, ${values.executor}, model \`${manifest.name}\`, threshold ` +
  `${values.threshold}, ${values.rate} req/s open loop, one pool per row. ${values.settle} s ` +
  "of uniform request types; then the step: every request of the one type whose preferred " +
  "experts the plan in force spreads worst over the backends (predicted per-layer backend " +
  "balancedness of that plan under each type, equal split over replicas: " +
  `${stepLine}). The machine was shared with other work; compare rows within this run only.`,
  "",
  "Columns (seconds after the step, same clock): `below_threshold_s` — first poll (every " +
  "250 ms) where the measured per-layer backend balancedness (`/api/load?detail=replicas`, " +
  "mean ÷ max over backends of the tokens/s each served in the layer) of the worst layer " +
  "fell below the threshold; `balancer_lowest` — the lowest worst layer the balancer " +
  "itself predicted for the plan in force on its short window (its decisions' `before`); " +
  "`switch_s` — the balancer's `rebalance` decision with outcome " +
  "`switched`, recorded once the new version is active on every backend; `recovered_s` — " +
  `first poll after the switch from which the measured worst layer stayed ≥ the threshold for ` +
  `${RECOVERY_POLLS} polls.`,
  "",
  `| ${header.join(" | ")} |`,
  `| ${header.map(() => "---").join(" | ")} |`,
  ...rows.map((r) => `| ${r.join(" | ")} |`),
  "",
].join("\n");
await Deno.writeTextFile(values["reaction-out"], md);
Deno.exit(0);
