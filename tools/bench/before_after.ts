// deno-lint-ignore-file no-console
/**
 * @module `deno task bench [--model dir] [--duration s] [--out dir]`: the before/after
 * benchmark. One run measures, on the same pool size and the same skewed workload:
 *
 * - two baselines, both round-robin entry routing, no batching (`fixed-1`), no pre-warm:
 *   "no-plan" (balancer off: every backend hosts every expert, no cross-backend hops) and
 *   "static" (static placement: contiguous expert blocks, rows cross backends);
 * - after — Switchyard with its DEFAULT configuration (`resolveConfig()`, nothing set);
 * - beside it, labelled, a tuned variant (faster balancer: threshold 0.9, every 2 s,
 *   3 s window) — not the headline.
 *
 * For each configuration:
 *   Step 1: start the pool (real processes on loopback) and warm up on skewed traffic;
 *           Switchyard waits (bounded) for its first rebalance.
 *   Step 2: saturation — closed loop → tokens/s.
 *   Step 3: the schedule — a compressed day (rate swinging 0.7–1.3× with the request-type
 *           mix shifting) plus a 2× spike with yet another mix, open loop at the
 *           first (no-plan) baseline's saturation rate → latency, expert load per backend (from backend
 *           load reports), utilisation and power (from `/api/load`).
 * Writes `throughput.csv` and `latency.csv` (per second, per configuration and phase)
 * and `summary.md` (each measure with after ÷ before) into `--out`.
 *
 * `--executor onnx` (default) runs the model on onnxruntime Workers; `--executor
 * simulated` spends an ASSUMED device time (`--fixed-ms`, `--per-row-ms`) instead of
 * computing, for pool sizes this machine cannot hold; such pools are host-bound on this
 * machine (docs/BENCHMARKS.md), so fleet-scale figures come from `deno task sim` instead.
 * `--smoke` runs seconds-long phases (tests use it to check the files are well formed).
 */
import { join } from "node:path";
import type { LoadReport } from "../../shared/load_report.ts";
import { loadDemoTraffic } from "../model/traffic.ts";
import { benchModelDir } from "./bench_model.ts";
import { startPool, type TestPool } from "../pool/processes.ts";
import { closedLoop, emptyResult, type LoadResult, openLoop } from "./load_generator.ts";
import { formatTable, round, summarize } from "./stats.ts";
import { type PreparedRequest, prepareWorkload } from "./workload.ts";
import { diurnalSchedule, rotate, type Segment } from "./before_after/schedule.ts";
import { perSecond, type SecondRow, toCsv } from "./before_after/series.ts";
import { backendLoads, logicalLoads, spread } from "./before_after/expert_load.ts";
import { type ConfigOutcome, summaryMarkdown } from "./before_after/summary.ts";
import { parseCli } from "../cli/cli_args.ts";
import { resolveConfig } from "../../shared/config.ts";
import { calibrateFromOrt } from "../../gpu-backend/execution/calibrate.ts";
import { json } from "./http_probe.ts";
import { waitFor } from "../wait_for.ts";

const { values } = parseCli({
  name: "deno task bench",
  summary:
    "Before/after: the baseline (round-robin, static placement, no batching, no pre-warm) vs\nSwitchyard on the same pool and one diurnal + spike workload; writes throughput.csv,\nlatency.csv and summary.md to --out.",
  options: {
    executor: {
      type: "string",
      default: "onnx",
      value: "<onnx|simulated>",
      description: "real onnxruntime Workers or simulated device time (assumed a + b·rows)",
    },
    model: {
      type: "string",
      value: "<dir>",
      description: "model directory (default models/demo, or a generated wide one when simulated)",
    },
    backends: {
      type: "string",
      value: "<n>",
      description: "backend processes (default 2 for onnx, 32 for simulated)",
    },
    experts: {
      type: "string",
      default: "256",
      value: "<n>",
      description: "experts per layer of the generated simulated model",
    },
    duration: {
      type: "string",
      default: "20",
      value: "<s>",
      description: "seconds of saturation (the schedule runs twice as long)",
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
      description: "simulated device ms per execution (assumed, not measured)",
    },
    "per-row-ms": {
      type: "string",
      default: "2",
      value: "<ms>",
      description: "simulated device ms per row (assumed, not measured)",
    },
    out: {
      type: "string",
      default: "out/bench",
      value: "<dir>",
      description: "directory for the CSVs and summary.md",
    },
    calibrate: {
      type: "boolean",
      default: false,
      description:
        "simulated: measure a and b with calibrateFromOrt() instead of --fixed-ms/--per-row-ms",
    },
    smoke: {
      type: "boolean",
      default: false,
      description: "seconds-long phases, no tuned variant (tests check the files' form)",
    },
  },
});
const simulated = values.executor === "simulated";
const smoke = values.smoke;
const backends = Number(values.backends ?? (simulated ? 32 : 2));
const durationS = smoke ? 2 : Number(values.duration);
const scheduleS = smoke ? 4 : 2 * durationS;
const warmS = smoke ? 1 : 6;
const concurrency = Number(values.concurrency);

// Step 0: the model — the demo model for onnx, a wide small one for simulated pools.
const modelDir = await benchModelDir({
  dir: values.model,
  simulated,
  experts: Number(values.experts),
  topK: 8,
});
const manifest = JSON.parse(await Deno.readTextFile(join(modelDir, "moe.json")));
// Device time of simulated executors: measured here, or the (assumed) CLI values.
const calibration = simulated && values.calibrate
  ? await calibrateFromOrt(modelDir, manifest)
  : null;
const device = calibration === null
  ? {
    fixedMs: values["fixed-ms"]!,
    perRowMs: values["per-row-ms"]!,
    label: `ASSUMED device time ${values["fixed-ms"]} ms + ${
      values["per-row-ms"]
    } ms/row, not measured`,
  }
  : {
    fixedMs: String(calibration.fixedMs),
    perRowMs: String(calibration.perRowMs),
    label: `MEASURED device time ${calibration.fixedMs.toFixed(3)} ms + ` +
      `${calibration.perRowMs.toFixed(4)} ms/row (calibrateFromOrt on this machine)`,
  };
const traffic = await loadDemoTraffic(modelDir);
const types = traffic?.request_types ?? ["default"];
const path = `/v2/models/${manifest.name}/infer`;
const admin = "bench-admin-token-0123456789";
const schedule = diurnalSchedule(scheduleS);
const workloads = new Map<number, PreparedRequest[]>();
const workloadFor = (mixShift: number) => {
  let requests = workloads.get(mixShift);
  if (requests === undefined) {
    requests = prepareWorkload({
      dModel: manifest.d_model,
      traffic,
      zipf: Number(values.zipf),
      typeOrder: rotate(types, mixShift),
      seed: 11 + mixShift,
    });
    workloads.set(mixShift, requests);
  }
  return requests;
};

interface Config {
  name: string;
  settings: string;
  env: Record<string, string>;
  waitForRebalance: boolean;
}

const defaults = resolveConfig();
const balancer = defaults.expert_balancer;
const baseline = {
  SWITCHYARD_ROUTER__POLICY: "round_robin",
  SWITCHYARD_BATCHING__POLICY: "fixed-1",
  SWITCHYARD_PREWARM__ENABLED: "false",
};
const configs: Config[] = [
  {
    name: "no-plan",
    settings: "round_robin routing, balancer off (every backend hosts every expert), " +
      "no batching (fixed-1), no pre-warm",
    env: { ...baseline, SWITCHYARD_EXPERT_BALANCER__STRATEGY: "off" },
    waitForRebalance: false,
  },
  {
    name: "static",
    settings: "round_robin routing, static placement, no batching (fixed-1), no pre-warm",
    env: { ...baseline, SWITCHYARD_EXPERT_BALANCER__STRATEGY: "static" },
    waitForRebalance: false,
  },
  {
    name: "switchyard",
    settings: `the DEFAULT configuration: ${defaults.router.policy} routing, ` +
      `${balancer.strategy} placement (threshold ${balancer.threshold}, every ` +
      `${balancer.adjust_interval / 1000} s, ${balancer.window / 1000} s window, redundancy ` +
      `${balancer.redundancy}), ${defaults.batching.policy} batching ` +
      `${defaults.batching.min}–${defaults.batching.max}, pre-warm ` +
      `${defaults.prewarm.enabled ? "on" : "off"}; same warm-up as the baselines`,
    env: {},
    waitForRebalance: false,
  },
  ...(smoke ? [] : [{
    name: "switchyard-tuned",
    settings: "TUNED variant, not the default: as switchyard but threshold 0.9, every 2 s, " +
      "3 s window; waits (≤ 30 s) for its first rebalance",
    env: {
      SWITCHYARD_EXPERT_BALANCER__ADJUST_INTERVAL: "2s",
      SWITCHYARD_EXPERT_BALANCER__WINDOW: "3s",
      SWITCHYARD_EXPERT_BALANCER__THRESHOLD: "0.9",
    },
    waitForRebalance: true,
  }]),
];

async function loadReports(pool: TestPool): Promise<Map<string, LoadReport>> {
  const auth = { authorization: `Bearer ${pool.token}` };
  const reports = await Promise.all(pool.backends.map((b) => json(`${b.url}/v2/load`, auth)));
  return new Map(reports.map((report: LoadReport) => [report.backend, report]));
}

/** Samples `/api/load` once a second until `stop` resolves. */
async function sampleLoad(url: string, stop: Promise<unknown>) {
  const samples: { utilisation: number[]; powerW: (number | null)[] }[] = [];
  let done = false;
  void stop.finally(() => done = true);
  while (!done) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    try {
      const load = await json(`${url}/api/load`);
      const fresh = load.backends.filter((b: { stale: boolean }) => !b.stale);
      samples.push({
        // A backend that reports no utilisation is left out, never counted as idle.
        utilisation: fresh.flatMap((b: { utilisation?: number | null }) =>
          typeof b.utilisation === "number" ? [b.utilisation] : []
        ),
        powerW: fresh.map((b: { power_w?: number | null }) => b.power_w ?? null),
      });
    } catch { /* a missed sample only narrows the average */ }
  }
  return samples;
}

/** Error counts by kind (status code or `network`) of two load runs together. */
function mergeKinds(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const merged = { ...a };
  for (const [kind, count] of Object.entries(b)) merged[kind] = (merged[kind] ?? 0) + count;
  return merged;
}

interface Run {
  outcome: ConfigOutcome;
  saturatedReqPerS: number;
  series: { phase: string; rows: SecondRow[] }[];
}

async function runSchedule(url: string, rate: number): Promise<LoadResult> {
  const merged = emptyResult();
  for (const segment of schedule as Segment[]) {
    const result = await openLoop({
      url: url + path,
      requests: workloadFor(segment.mixShift),
      rate: rate * segment.rateMultiplier,
      durationS: segment.durationS,
      seed: 100 + Math.round(segment.startS),
    });
    merged.sent += result.sent;
    merged.ok += result.ok;
    merged.errors += result.errors;
    merged.errorKinds = mergeKinds(merged.errorKinds, result.errorKinds);
    merged.shed += result.shed;
    merged.rows += result.rows;
    merged.latencies.push(...result.latencies);
    for (const [at, ms, rows] of result.timeline) {
      merged.timeline.push([merged.seconds + at, ms, rows]);
    }
    merged.seconds += result.seconds;
  }
  return merged;
}

async function run(config: Config, baseRate: number | undefined): Promise<Run> {
  const pool = await startPool({
    modelDir,
    backends,
    executors: 1,
    env: {
      ...config.env,
      SWITCHYARD_AUTH__ADMIN_TOKEN: admin,
      SWITCHYARD_LOG__DIR: "",
      ...(simulated
        ? {
          SWITCHYARD_BACKEND__EXECUTOR: "simulated",
          SWITCHYARD_BACKEND__SIMULATED__FIXED_MS: device.fixedMs,
          SWITCHYARD_BACKEND__SIMULATED__PER_ROW_MS: device.perRowMs,
        }
        : {}),
    },
  });
  try {
    const url = pool.router.url;
    await waitFor("the first plan", async () => (await json(`${url}/api/plan`)).version >= 1, {
      timeoutMs: 20_000,
      retryErrors: true,
      onTimeout: "resolve",
    });
    // Step 1: warm up on the morning mix; Switchyard waits for its first rebalance.
    const warm = openLoop({
      url: url + path,
      requests: workloadFor(0),
      rate: simulated ? 60 : 150,
      durationS: warmS,
    });
    if (config.waitForRebalance) {
      await waitFor("a rebalance", async () => {
        const plan = await json(`${url}/api/plan`);
        return plan.decisions?.some((d: { action: string; outcome: string }) =>
          d.action === "rebalance" && d.outcome === "switched"
        ) ?? false;
      }, { timeoutMs: smoke ? 3000 : 30_000, retryErrors: true, onTimeout: "resolve" });
    }
    await warm;
    // Step 2: saturation.
    const saturated = await closedLoop({
      url: url + path,
      requests: workloadFor(0),
      concurrency,
      durationS,
    });
    const saturatedReqPerS = saturated.ok / saturated.seconds;
    // Step 3: the schedule at the first baseline's saturation rate.
    const rate = baseRate ?? saturatedReqPerS;
    const before = await loadReports(pool);
    const scheduled = runSchedule(url, rate);
    const samples = await sampleLoad(url, scheduled);
    const result = await scheduled;
    const after = await loadReports(pool);
    // Measures.
    const perBackend = spread(backendLoads(manifest.layers, before, after));
    const logical = spread(logicalLoads(manifest.experts, manifest.layers, before, after));
    const utilisations = samples.flatMap((s) => s.utilisation);
    const meanOf = (xs: number[]) =>
      xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
    const perSample = samples.filter((s) => s.utilisation.length > 0).map((s) => {
      const max = Math.max(...s.utilisation, 0);
      return max > 0 ? meanOf(s.utilisation)! / max : 1;
    });
    const powers = samples.flatMap((s) => s.powerW);
    const joules = powers.length > 0 && powers.every((p) => p !== null)
      ? powers.reduce((sum, p) => sum! + p!, 0)! // one sample per backend per second
      : null;
    const latency = summarize(result.latencies);
    const sent = saturated.sent + result.sent;
    // Only the schedule is open loop: its arrivals are what shedding is measured against.
    const openLoopArrivals = result.sent + result.shed;
    return {
      saturatedReqPerS,
      outcome: {
        name: config.name,
        settings: config.settings,
        tokensPerS: saturated.rows / saturated.seconds,
        p50: latency.p50,
        p99: latency.p99,
        errorRate: sent === 0 ? 0 : (saturated.errors + result.errors) / sent,
        errorKinds: mergeKinds(saturated.errorKinds, result.errorKinds),
        shedRate: openLoopArrivals === 0 ? 0 : result.shed / openLoopArrivals,
        backendCv: perBackend.cv,
        logicalCv: logical.cv,
        backendBalancedness: perBackend.balancedness,
        utilisation: meanOf(utilisations),
        utilisationBalancedness: meanOf(perSample),
        tokensPerJoule: joules === null || joules === 0 ? null : result.rows / joules,
      },
      series: [
        { phase: "saturation", rows: perSecond(saturated.timeline, saturated.seconds) },
        { phase: "schedule", rows: perSecond(result.timeline, result.seconds) },
      ],
    };
  } finally {
    await pool.close();
  }
}

const context = [
  `${
    simulated
      ? `SIMULATED executors (${device.label}; outputs are not model outputs; ` +
        "host-bound on this machine)"
      : "real onnxruntime CPU executors"
  }, ${backends} backends × 1 executor Worker`,
  `model ${manifest.name}: ${manifest.layers} layers × ${manifest.experts} experts, top-${manifest.top_k}`,
  `workload: Zipf ${values.zipf} request types; saturation ${concurrency} closed-loop clients × ${durationS} s; ` +
  `schedule ${scheduleS} s (8 segments: 0.7–1.3× day swing, mix shift at mid-day, 2× spike with its own mix) ` +
  `open loop at the no-plan baseline's saturation rate`,
  `machine: ${navigator.hardwareConcurrency} CPU cores shared by the load generator, router and backends`,
];
console.log(`bench — ${context.join("; ")}`);
// The first baseline's saturation rate is the schedule's offered rate for every run.
const runs: Run[] = [];
for (const config of configs) {
  runs.push(await run(config, runs[0]?.saturatedReqPerS));
  if (runs.length === 1) {
    console.log(
      `${config.name} saturation: ${round(runs[0]!.saturatedReqPerS, 1)} req/s → schedule rate`,
    );
  }
}
const offeredRate = runs[0]!.saturatedReqPerS;

await Deno.mkdir(values.out!, { recursive: true });
const seriesRows = (pick: (row: SecondRow) => (number | string)[]) =>
  runs.flatMap((r) =>
    r.series.flatMap(({ phase, rows }) => rows.map((row) => [r.outcome.name, phase, ...pick(row)]))
  );
await Deno.writeTextFile(
  join(values.out!, "throughput.csv"),
  toCsv(
    ["config", "phase", "t_s", "requests_s", "tokens_s"],
    seriesRows((row) => [row.t, row.requestsPerS, row.tokensPerS]),
  ),
);
await Deno.writeTextFile(
  join(values.out!, "latency.csv"),
  toCsv(
    ["config", "phase", "t_s", "p50_ms", "p99_ms"],
    seriesRows((row) => [row.t, round(row.p50), round(row.p99)]),
  ),
);
const command = ["deno task bench", ...Deno.args].join(" ");
const summary = summaryMarkdown(
  runs.map((r) => r.outcome),
  { baselines: ["no-plan", "static"], after: "switchyard" },
  [
    `command: \`${command}\``,
    ...context,
    `schedule mean rate ${round(offeredRate, 1)} req/s (the no-plan baseline's saturation), ` +
    "the same for every configuration",
  ],
);
await Deno.writeTextFile(join(values.out!, "summary.md"), summary);
console.log("\n" + summary);
console.log(
  formatTable(
    ["file"],
    [["throughput.csv"], ["latency.csv"], ["summary.md"]].map(([f]) => [
      join(values.out!, f!),
    ]),
  ),
);
Deno.exit(0);
