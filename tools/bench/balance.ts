// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:balance`: static placement vs online rebalancing on the same
 * pool and the same skewed traffic, in one run.
 *
 * For each strategy (static, then dynamic):
 *   Step 1: start N backends and a router with that `expert_balancer.strategy`.
 *   Step 2: warm up with Zipf-skewed request types (open loop) until load reports are
 *           in — and, for dynamic, until the balancer has switched to a planned placement.
 *   Step 3: saturate (closed loop) → tokens/s; read the plan's predicted balancedness
 *           (per-backend expert load, mean/max) and the measured utilisation balancedness.
 *   Step 4: open loop at 70 % of the static saturation rate → p50/p99.
 *
 * `--executor onnx` runs the demo model on real onnxruntime Workers; `--executor
 * simulated` runs an assumed device time per execution (a + b·rows) so many backends can
 * behave like separate accelerators on this machine (outputs are not model outputs).
 */
import { join } from "node:path";
import { loadDemoTraffic } from "../model/traffic.ts";
import { benchModelDir } from "./bench_model.ts";
import { startPool, type TestPool } from "../pool/processes.ts";
import { closedLoop, type LoadResult, openLoop } from "./load_generator.ts";
import { formatTable, round, summarize } from "./stats.ts";
import { prepareWorkload } from "./workload.ts";
import { parseCli } from "../cli/cli_args.ts";
import { measureReaction, type ReactionResult, RECOVERY_POLLS } from "./balance/reaction.ts";
import { waitFor } from "../wait_for.ts";

const { values } = parseCli({
  name: "deno task bench:balance",
  summary:
    "Static placement vs online rebalancing on the same pool and skewed traffic, in one run:\nsaturation tokens/s, predicted and measured balancedness, p50/p99 at 70 % load.",
  options: {
    phase: {
      type: "string",
      default: "all",
      value: "<all|compare|reaction>",
      description: "compare: static vs dynamic; reaction: skew step → plan switch time",
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
    duration: {
      type: "string",
      default: "10",
      value: "<s>",
      description: "seconds per measurement phase",
    },
    concurrency: {
      type: "string",
      default: "48",
      value: "<n>",
      description: "closed-loop clients at saturation",
    },
    zipf: {
      type: "string",
      default: "1.2",
      value: "<s>",
      description: "Zipf exponent over request types",
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
    out: {
      type: "string",
      default: "out/bench-balance.csv",
      value: "<file>",
      description: "CSV to write",
    },
  },
});
const simulated = values.executor === "simulated";
const backends = Number(values.backends ?? (simulated ? 8 : 2));
const durationS = Number(values.duration);
const concurrency = Number(values.concurrency);

// The model: the demo model for onnx; a small wide one for simulated pools.
const modelDir = await benchModelDir({
  dir: values.model,
  simulated,
  experts: Number(values.experts),
  topK: 6,
});
const manifest = JSON.parse(await Deno.readTextFile(join(modelDir, "moe.json")));
const requests = prepareWorkload({
  dModel: manifest.d_model,
  traffic: await loadDemoTraffic(modelDir),
  zipf: Number(values.zipf),
});
const path = `/v2/models/${manifest.name}/infer`;
const admin = "bench-admin-token-0123456789";

async function json(url: string) {
  return await (await fetch(url)).json();
}

interface Outcome {
  strategy: string;
  planVersion: number;
  planReason: string;
  predictedBalancedness: number;
  utilisationBalancedness: number;
  saturated: LoadResult;
  at70: LoadResult;
}

/** Runs one strategy; the 70 % point defaults to 70 % of its own saturation rate. */
async function run(
  strategy: "static" | "dynamic",
  rate70?: number,
): Promise<Outcome & { rate70: number }> {
  const pool: TestPool = await startPool({
    modelDir,
    backends,
    executors: 1,
    env: {
      SWITCHYARD_EXPERT_BALANCER__STRATEGY: strategy,
      SWITCHYARD_EXPERT_BALANCER__ADJUST_INTERVAL: "2s",
      SWITCHYARD_EXPERT_BALANCER__WINDOW: "3s",
      SWITCHYARD_EXPERT_BALANCER__THRESHOLD: "0.9",
      SWITCHYARD_AUTH__ADMIN_TOKEN: admin,
      ...(simulated
        ? {
          SWITCHYARD_BACKEND__EXECUTOR: "simulated",
          SWITCHYARD_BACKEND__SIMULATED__FIXED_MS: values["fixed-ms"],
          SWITCHYARD_BACKEND__SIMULATED__PER_ROW_MS: values["per-row-ms"],
        }
        : {}),
    },
  });
  try {
    const url = pool.router.url;
    await waitFor(
      "the first plan",
      async () => ((await json(`${url}/api/plan`)).version >= 1 ? true : undefined),
      { timeoutMs: 20_000, onTimeout: "resolve" },
    );
    // Warm up on skewed traffic; dynamic waits for the balancer's switch.
    const warm = openLoop({ url: url + path, requests, rate: simulated ? 60 : 150, durationS: 6 });
    if (strategy === "dynamic") {
      await waitFor("a rebalance", async () => {
        const plan = await json(`${url}/api/plan`);
        return plan.decisions?.some((d: { action: string; outcome: string }) =>
            d.action === "rebalance" && d.outcome === "switched"
          )
          ? true
          : undefined;
      }, { timeoutMs: 30_000, onTimeout: "resolve" });
    }
    await warm;
    const saturated = await closedLoop({ url: url + path, requests, concurrency, durationS });
    const plan = await json(`${url}/api/plan`);
    const load = await json(`${url}/api/load`);
    const rate = rate70 ?? 0.7 * saturated.ok / saturated.seconds;
    const at70 = await openLoop({ url: url + path, requests, rate, durationS });
    return {
      strategy,
      planVersion: plan.version,
      planReason: plan.reason,
      predictedBalancedness: plan.predicted_balancedness,
      utilisationBalancedness: load.pool.utilisation_balancedness,
      saturated,
      at70,
      rate70: rate,
    };
  } finally {
    await pool.close();
  }
}

if (values.phase === "reaction" || values.phase === "all") {
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
  if (values.phase === "reaction") Deno.exit(0);
}

console.log(
  `bench:balance — ${values.executor} executors, ${backends} backends, model ${manifest.name} ` +
    `(${manifest.layers} layers × ${manifest.experts} experts, top-${manifest.top_k}), Zipf ${values.zipf} ` +
    `request types, closed loop ${concurrency} clients × ${durationS} s` +
    (simulated ? `, device time ${values["fixed-ms"]} ms + ${values["per-row-ms"]} ms/row` : ""),
);
const staticRun = await run("static");
const rate70 = staticRun.rate70;
const dynamicRun = await run("dynamic", rate70);

const rows = [staticRun, dynamicRun].map((o) => {
  const sat = summarize(o.saturated.latencies);
  const p70 = summarize(o.at70.latencies);
  return [
    o.strategy,
    o.planVersion,
    round(o.predictedBalancedness, 3),
    round(o.utilisationBalancedness, 3),
    round(o.saturated.rows / o.saturated.seconds, 0),
    round(sat.p99),
    round(p70.p50),
    round(p70.p99),
    o.saturated.errors + o.at70.errors,
  ];
});
const header = [
  "strategy",
  "plan_version",
  "predicted_balancedness",
  "utilisation_balancedness",
  "saturated_tokens_s",
  "saturated_p99_ms",
  "p50_at_70pct_ms",
  "p99_at_70pct_ms",
  "errors",
];
console.log("\n" + formatTable(header, rows));
await Deno.mkdir("out", { recursive: true });
await Deno.writeTextFile(values.out, [header, ...rows].map((r) => r.join(",")).join("\n") + "\n");
const gain = (dynamicRun.saturated.rows / dynamicRun.saturated.seconds) /
  (staticRun.saturated.rows / staticRun.saturated.seconds);
console.log(
  `\nthroughput dynamic / static: ${
    round(gain)
  }×; plan after rebalancing: "${dynamicRun.planReason}"`,
);
console.log(`offered load at 70 %: ${round(rate70, 1)} req/s; wrote ${values.out}`);
Deno.exit(0);
