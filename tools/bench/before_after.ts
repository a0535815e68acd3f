// deno-lint-ignore-file no-console
/**
 * @module `deno task bench`: the before/after that isolates balancing (issue 26, item 6),
 * with the conventions of vLLM `bench serve` and AIPerf — open-loop Poisson (or bursty
 * gamma) arrivals at several rates, a closed-loop saturation point, a warm-up excluded
 * from the results, and goodput under a latency SLO beside throughput and p50/p90/p99.
 *
 * The configurations differ only in placement (`before_after/configs.ts`): `static`
 * (the baseline), `eplb-10min` (greedy EPLB every 10 minutes of load, driven through the
 * admin API), `switchyard` (the default configuration) — on the benchmark model's budget
 * pool, where no backend holds every expert — and, on the demo model with ample memory,
 * `replicate-all` beside `static` and `switchyard`.
 *
 *   Step 0: the models (generated when missing), the compute limit of this machine, and
 *           for the simulated executor its device time MEASURED here: one composed layer of
 *           the pool's experts per backend on onnxruntime (`calibrateLayerFromOrt`).
 *   Step 1: per executor (simulated, onnx), per seed, per configuration (static first: its
 *           capacity is the base of every open-loop rate of that seed): a fresh pool through
 *           the phases (`before_after/run_config.ts`). The SLO is fixed from the first
 *           seed's static idle latency before anything is compared.
 *   Step 2: the demo-model check (capacity only), per seed and configuration.
 *   Step 3: `throughput.csv` and `latency.csv` (per second, per executor, configuration,
 *           seed and phase) and `summary.md` (targets, the seed's five metrics, every
 *           phase) into `--out`, each starting with the command, commit, date and machine.
 *
 * `--smoke` runs second-long phases and one seed (tests check the files' form with it).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseCli } from "../cli/cli_args.ts";
import { generateModel } from "../model/generate.ts";
import { BENCH_PRESET } from "../model/presets.ts";
import { loadDemoTraffic } from "../model/traffic.ts";
import { loadManifest } from "../../gpu-backend/server/start_backend.ts";
import { calibrateLayerFromOrt } from "../../gpu-backend/layer/calibrate_layer.ts";
import { expertFileBytes } from "../../gpu-backend/residency/expert_bytes.ts";
import { slotsPerBackend } from "../../router/control/balancer/plan_math.ts";
import { resolveConfig } from "../../shared/config.ts";
import type { ModelManifest } from "../../shared/model_manifest.ts";
import { benchModelDir } from "./bench_model.ts";
import { computeLimit } from "./compute_limit.ts";
import { resultsHeader } from "./results_header.ts";
import { type PreparedRequest, prepareWorkload } from "./workload.ts";
import { placementConfigs, type PoolSettings } from "./before_after/configs.ts";
import {
  compression,
  eplbPeriodS,
  loadSeconds,
  type PhasePlan,
  rotate,
} from "./before_after/phases.ts";
import { type ConfigRun, runConfig } from "./before_after/run_config.ts";
import { outcomeOf } from "./before_after/outcome.ts";
import { demoTarget, itemTargets } from "./before_after/targets.ts";
import { type ExecutorSection, summaryMarkdown } from "./before_after/summary.ts";
import { perSecond, toCsv } from "./before_after/series.ts";
import { readingNotes } from "./before_after/reading.ts";

const { values } = parseCli({
  name: "deno task bench",
  summary: "Before/after that isolates balancing: static blocks vs greedy EPLB every 10 minutes\n" +
    "of load vs Switchyard's default, same pool, batching and entry routing, on the real\n" +
    "onnxruntime and the simulated executor (device time measured here), plus the demo-model\n" +
    "check with full replication; writes throughput.csv, latency.csv and summary.md to --out.",
  options: {
    executors: {
      type: "string",
      default: "simulated,onnx",
      value: "<list>",
      description: "simulated (one dedicated device per backend) and/or onnx (real, shared cores)",
    },
    model: {
      type: "string",
      default: "models/bench",
      value: "<dir>",
      description: "the budget pool's model (generated with --preset bench when missing)",
    },
    backends: { type: "string", default: "4", value: "<n>", description: "backend processes" },
    "budget-mb": {
      type: "string",
      default: "77.1",
      value: "<MiB>",
      description: "backend.memory_budget_mb (77.1: 102 of 256 experts per layer)",
    },
    redundancy: {
      type: "string",
      default: "0.6",
      value: "<r>",
      description: "expert_balancer.redundancy (0.6: the planner uses all 102 slots)",
    },
    configs: {
      type: "string",
      default: "static,eplb-10min,switchyard",
      value: "<list>",
      description: "configurations on the budget pool (static is the baseline, runs first)",
    },
    seeds: { type: "string", default: "1,2,3", value: "<list>", description: "seeds" },
    warm: {
      type: "string",
      default: "15",
      value: "<s>",
      description: "shortest warm-up (excluded from the results)",
    },
    settle: {
      type: "string",
      default: "10",
      value: "<s>",
      description: "warm-up goes on until the plan has not changed for this long",
    },
    "max-warm": {
      type: "string",
      default: "60",
      value: "<s>",
      description: "longest warm-up",
    },
    idle: { type: "string", default: "4", value: "<s>", description: "idle phase (1 client)" },
    saturation: {
      type: "string",
      default: "10",
      value: "<s>",
      description: "closed-loop saturation phase",
    },
    concurrency: {
      type: "string",
      default: "64",
      value: "<n>",
      description: "closed-loop clients at saturation",
    },
    "warm-clients": {
      type: "string",
      default: "8",
      value: "<n>",
      description: "closed-loop clients during the warm-up",
    },
    rates: {
      type: "string",
      default: "0.5,0.7,1.0,1.3",
      value: "<list>",
      description: "open-loop rates, fractions of static's capacity",
    },
    sweep: { type: "string", default: "8", value: "<s>", description: "seconds per rate" },
    shift: {
      type: "string",
      default: "60",
      value: "<s>",
      description: "shift phase: one hour of load compressed into this (EPLB period = 1/6)",
    },
    "shift-rate": {
      type: "string",
      default: "0.9",
      value: "<f>",
      description: "shift phase's rate, fraction of static's capacity",
    },
    shifts: {
      type: "string",
      default: "2",
      value: "<n>",
      description: "mix changes during the shift phase",
    },
    burstiness: {
      type: "string",
      default: "1",
      value: "<k>",
      description: "gamma shape of open-loop gaps (1 = Poisson, < 1 bursty)",
    },
    zipf: {
      type: "string",
      default: "1",
      value: "<s>",
      description: "Zipf exponent over request types (1: 8 bestsellers at ~13×)",
    },
    "slo-ms": {
      type: "string",
      value: "<ms>",
      description: "latency SLO per request (default: --slo-scale × static's idle p50)",
    },
    "slo-scale": {
      type: "string",
      default: "10",
      value: "<x>",
      description: "SLO = this × the first seed's static idle p50 (assumed)",
    },
    "device-scale": {
      type: "string",
      default: "1",
      value: "<x>",
      description: "simulated device time = measured × this (≠ 1 is an assumption)",
    },
    "load-fixed-ms": {
      type: "string",
      default: "1",
      value: "<ms>",
      description: "simulated expert load time, fixed part (assumed)",
    },
    "demo-model": {
      type: "string",
      default: "models/demo",
      value: "<dir>",
      description: "the demo-model check's model (generated when missing)",
    },
    "demo-backends": {
      type: "string",
      default: "2",
      value: "<n>",
      description: "backends of the demo-model check (no memory budget)",
    },
    "demo-configs": {
      type: "string",
      default: "static,replicate-all,switchyard",
      value: "<list>",
      description: "configurations of the demo-model check",
    },
    "skip-demo": { type: "boolean", default: false, description: "no demo-model check" },
    out: {
      type: "string",
      default: "out/bench",
      value: "<dir>",
      description: "directory for the CSVs and summary.md",
    },
    smoke: {
      type: "boolean",
      default: false,
      description: "second-long phases, one seed (tests check the files' form)",
    },
  },
});

const smoke = values.smoke ?? false;
const list = (text: string) => text.split(",").map((s) => s.trim()).filter((s) => s !== "");
const numbers = (text: string) => list(text).map(Number);
const phases: PhasePlan = smoke
  ? {
    warmS: 1,
    settleS: 0,
    maxWarmS: 1,
    idleS: 1,
    saturationS: 1,
    sweepS: 1,
    rates: [0.5, 0.9],
    shiftS: 3,
    shiftRate: 0.7,
    shifts: 2,
  }
  : {
    warmS: Number(values.warm),
    settleS: Number(values.settle),
    maxWarmS: Number(values["max-warm"]),
    idleS: Number(values.idle),
    saturationS: Number(values.saturation),
    sweepS: Number(values.sweep),
    rates: numbers(values.rates),
    shiftS: Number(values.shift),
    shiftRate: Number(values["shift-rate"]),
    shifts: Number(values.shifts),
  };
const seeds = smoke ? [1] : numbers(values.seeds);
const executors = list(values.executors);
for (const executor of executors) {
  if (executor !== "onnx" && executor !== "simulated") {
    throw new RangeError(`Cannot run executor "${executor}": not one of simulated, onnx`);
  }
}
const configs = placementConfigs(list(values.configs));
if (configs[0]?.name !== "static") {
  throw new RangeError(
    "Cannot run the benchmark: --configs must start with static (its capacity sets the rates)",
  );
}
const demoConfigs = values["skip-demo"] ? [] : placementConfigs(list(values["demo-configs"]));
const adminToken = "bench-admin-token-0123456789";
const concurrency = smoke ? 4 : Number(values.concurrency);
const warmClients = smoke ? 2 : Number(values["warm-clients"]);
const burstiness = Number(values.burstiness);
const deviceScale = Number(values["device-scale"]);
const benchStarted = performance.now();
const log = (line: string) =>
  console.log(`[bench +${((performance.now() - benchStarted) / 1000).toFixed(0)} s] ${line}`);

// Step 0: the models, the compute limit and the simulated device time.
async function benchModel(dir: string): Promise<string> {
  if (!existsSync(join(dir, "moe.json"))) {
    log(`generating the benchmark model into ${dir} (--preset bench)`);
    await generateModel(dir, BENCH_PRESET);
  }
  return dir;
}
const modelDir = await benchModel(values.model);
const manifest = await loadManifest(modelDir);
const shape = (m: ModelManifest) => ({
  name: m.name,
  layers: m.layers,
  experts: m.experts,
  groups: m.groups ?? 1,
});
const limit = await computeLimit(modelDir, manifest);
const budgetMb = Number(values["budget-mb"]);
const redundancy = Number(values.redundancy);
const backends = Number(values.backends);
const expertBytes = Math.max(...(await expertFileBytes(modelDir, manifest)).flat());
// The slots a backend of the pool hosts per layer: the planner's sizing within the budget.
const hostedPerBackend = Math.min(
  manifest.experts,
  slotsPerBackend(manifest.experts, backends, redundancy),
  Math.floor((budgetMb * 2 ** 20) / (manifest.layers * expertBytes)),
);
const calibration = executors.includes("simulated")
  ? await calibrateLayerFromOrt(modelDir, manifest, {
    hosted: Math.max(manifest.top_k, hostedPerBackend),
  })
  : null;

const traffic = await loadDemoTraffic(modelDir);
const workloadCache = new Map<string, PreparedRequest[]>();
function workloadOf(dir: string, m: ModelManifest, t: typeof traffic, seed: number) {
  const types = t?.request_types ?? ["default"];
  return (mix: number) => {
    const key = `${dir}/${seed}/${mix}`;
    let requests = workloadCache.get(key);
    if (requests === undefined) {
      requests = prepareWorkload({
        dModel: m.d_model,
        traffic: t,
        zipf: Number(values.zipf),
        typeOrder: rotate(types, mix),
        seed: seed * 100 + mix,
      });
      workloadCache.set(key, requests);
    }
    return requests;
  };
}

/** Failed runs, in words: the others go on, and the summary lists these. */
const failures: string[] = [];
async function attempt<T>(label: string, work: () => Promise<T>): Promise<T | null> {
  try {
    return await work();
  } catch (error) {
    const message = (error as Error).message.split("\n")[0];
    failures.push(`${label}: ${message}`);
    log(`FAILED ${label}: ${message}`);
    return null;
  }
}

// Step 1: the budget pool, per executor, seed and configuration.
const sections: ExecutorSection[] = [];
const allRuns: { model: string; sloMs: number; run: ConfigRun }[] = [];
const sloScale = Number(values["slo-scale"]);
const fixedSlo = values["slo-ms"] === undefined ? null : Number(values["slo-ms"]);
const sloSource = (idleP50: number | null) =>
  fixedSlo !== null
    ? "set with --slo-ms"
    : `assumed: ${sloScale} × the static baseline's idle p50 (${
      idleP50?.toFixed(1)
    } ms, first seed), fixed before any configuration is compared; a bound the baseline meets ` +
      "at light load and misses near its capacity, so the sweep brackets its 50 % point";
for (const executor of executors) {
  const simulated = executor === "simulated" && calibration !== null
    ? {
      fixedMs: calibration.fixedMs * deviceScale,
      perRowMs: calibration.perRowMs * deviceScale,
      loadFixedMs: Number(values["load-fixed-ms"]),
    }
    : null;
  const pool: PoolSettings = { backends, budgetMb, redundancy, simulated, adminToken };
  const runs: ConfigRun[] = [];
  let sloMs = fixedSlo;
  let idleP50: number | null = null;
  for (const seed of seeds) {
    let baseRps: number | null = null;
    for (const config of configs) {
      const run = await attempt(`${executor} ${config.name} seed ${seed}`, () =>
        runConfig({
          executor,
          modelDir,
          model: shape(manifest),
          config,
          pool,
          seed,
          phases,
          budgetSlots: hostedPerBackend,
          baseRps,
          openLoops: true,
          workload: workloadOf(modelDir, manifest, traffic, seed),
          concurrency,
          warmClients,
          burstiness,
          log,
        }));
      if (run === null) {
        // Without the baseline the seed's rates are unknown: its other runs would not compare.
        if (config.name === "static") {
          failures.push(`${executor} seed ${seed}: skipped after its static baseline failed`);
          break;
        }
        continue;
      }
      if (config.name === "static") {
        baseRps = run.capacityRps;
        if (sloMs === null) {
          const idle = run.phases.find((p) => p.name === "idle")!.result.latencies;
          idleP50 = [...idle].sort((a, b) => a - b)[Math.floor(idle.length / 2)] ?? 100;
          sloMs = sloScale * idleP50;
        }
      }
      log(
        `${executor} ${config.name} seed ${seed}: ${run.capacityRps.toFixed(1)} req/s at ` +
          `saturation, ${run.switches.filter((s) => s.atS >= 0).length} plan switches`,
      );
      runs.push(run);
    }
  }
  if (runs.length === 0 || sloMs === null) continue;
  const outcomes = runs.map((run) => outcomeOf(run, sloMs!));
  for (const run of runs) allRuns.push({ model: manifest.name, sloMs: sloMs!, run });
  const slots = runs.find((r) => r.slots !== null)?.slots ?? null;
  sections.push({
    name: executor,
    label: simulated === null
      ? "real onnxruntime executor (one Worker per backend; all processes share this machine's cores)"
      : `simulated executor — one dedicated device per backend, device time per layer execution ` +
        `${simulated.fixedMs.toFixed(3)} ms + ${simulated.perRowMs.toFixed(5)} ms per expert row ` +
        (deviceScale === 1
          ? "(MEASURED in this run: "
          : `(ASSUMED ${deviceScale} × the time MEASURED in this run: `) +
        `${calibration!.method}${
          slots !== null && slots !== calibration!.hosted
            ? `; NOTE the pool's plans hold ${slots} slots per backend, calibrated with ${
              calibration!.hosted
            }`
            : ""
        })`,
    sloMs: sloMs!,
    sloSource: sloSource(idleP50),
    outcomes,
    targets: itemTargets(outcomes),
  });
}

// Step 2: the demo-model check (ample memory: replicate-all is possible).
let demo: {
  label: string;
  outcomes: ReturnType<typeof outcomeOf>[];
  target: ReturnType<typeof demoTarget>;
} | null = null;
const demoModel = demoConfigs.length === 0 ? null : await attempt("demo model", async () => {
  const dir = await benchModelDir({
    dir: values["demo-model"],
    simulated: false,
    experts: 0,
    topK: 0,
  });
  return { dir, manifest: await loadManifest(dir), traffic: await loadDemoTraffic(dir) };
});
if (demoModel !== null) {
  const { dir: demoDir, manifest: demoManifest, traffic: demoTraffic } = demoModel;
  const pool: PoolSettings = {
    backends: Number(values["demo-backends"]),
    budgetMb: null,
    redundancy: null,
    simulated: null,
    adminToken,
  };
  const runs: ConfigRun[] = [];
  for (const seed of seeds) {
    for (const config of demoConfigs) {
      const run = await attempt(`demo ${config.name} seed ${seed}`, () =>
        runConfig({
          executor: "onnx",
          modelDir: demoDir,
          model: shape(demoManifest),
          config,
          pool,
          seed,
          phases,
          budgetSlots: null,
          baseRps: null,
          openLoops: false,
          workload: workloadOf(demoDir, demoManifest, demoTraffic, seed),
          concurrency,
          warmClients,
          burstiness,
          log,
        }));
      if (run === null) continue;
      log(`demo ${config.name} seed ${seed}: ${run.capacityRps.toFixed(1)} req/s at saturation`);
      runs.push(run);
    }
  }
  const staticIdle = runs.find((r) => r.config === "static")?.phases.find((p) => p.name === "idle");
  const sorted = [...(staticIdle?.result.latencies ?? [])].sort((a, b) => a - b);
  const demoSlo = fixedSlo ?? sloScale * (sorted[Math.floor(sorted.length / 2)] ?? 100);
  const outcomes = runs.map((run) => outcomeOf(run, demoSlo));
  for (const run of runs) allRuns.push({ model: demoManifest.name, sloMs: demoSlo, run });
  demo = {
    label:
      `${demoManifest.name} (${demoManifest.layers} layers × ${demoManifest.experts} experts, ` +
      `top-${demoManifest.top_k}) on ${pool.backends} backends without a memory budget, real ` +
      "onnxruntime executor; warm-up, idle and saturation phases only",
    outcomes,
    target: demoTarget(outcomes),
  };
}

// Step 3: the files.
const command = ["deno task bench", ...Deno.args].join(" ");
const defaults = resolveConfig();
const header = await resultsHeader({
  command,
  limit: `${Math.round(limit.tokensPerS)} tokens/s per core for ${manifest.name} ` +
    `(single-thread MatMul ${limit.gflops.toFixed(1)} GFLOP/s at batch 256 ÷ ` +
    `${(limit.flopsPerToken / 1e6).toFixed(2)} MFLOP per token)`,
});
const notes = [
  `model ${manifest.name}: ${manifest.layers} layers × ${manifest.experts} experts, ` +
  `top-${manifest.top_k}${
    manifest.groups ? ` within ${manifest.topk_group} of ${manifest.groups} groups` : ""
  }; Zipf ${values.zipf} over the request types`,
  `pool: ${backends} backends × 1 executor, memory budget ${budgetMb} MiB each ` +
  `(${hostedPerBackend} of ${manifest.experts} experts per layer), redundancy ${redundancy}; ` +
  `entry routing ${defaults.router.policy}, batching ${defaults.batching.policy} ` +
  `${defaults.batching.min}–${defaults.batching.max} (the defaults, for every configuration)`,
  `seeds ${seeds.join(", ")} (a fresh pool per configuration and seed; each seed draws its own ` +
  "requests and arrivals); figures are the mean over seeds with [min–max]",
  `phases per pool: warm-up closed loop × ${warmClients} clients (excluded), at least ` +
  `${phases.warmS} s and until the plan has not changed for ${phases.settleS} s (at most ` +
  `${phases.maxWarmS} s); ` +
  `idle ${phases.idleS} s (1 client); saturation ${phases.saturationS} s × ${concurrency} clients; ` +
  `sweep ${phases.sweepS} s at each of ${phases.rates.join(", ")} × static's capacity; ` +
  `shift ${phases.shiftS} s at ${phases.shiftRate} × static's capacity, the mix changing ` +
  `${phases.shifts} times (ranking rotated by one type each time: the hot experts move to ` +
  "other backends' blocks)",
  `open-loop arrivals: ${
    burstiness === 1 ? "Poisson" : `gamma gaps, burstiness ${burstiness}`
  }; latency from the scheduled arrival`,
  `time compression: the shift phase is one hour of load in ${phases.shiftS} s ` +
  `(${compression(phases).toFixed(0)}×), so eplb-10min re-plans every ${
    eplbPeriodS(phases).toFixed(1)
  } s, from the end of the warm-up to the end of the run (each switch takes the time it takes: ` +
  "staging is not compressed). switchyard runs its defaults on the real clock (evaluates every " +
  `${defaults.expert_balancer.evaluate_interval / 1000} s, at most one switch per ` +
  `${defaults.expert_balancer.adjust_interval / 1000} s unless the worst layer gains ` +
  `${defaults.expert_balancer.switch_gain}): in load time one adjust_interval is ${
    ((defaults.expert_balancer.adjust_interval / 1000) * compression(phases) / 60).toFixed(0)
  } minutes`,
  `load generator: this Deno process (keep-alive fetch), on the same cores as the pool; its ` +
  "CPU is in the capacity table",
  `wall time per pool: about ${(loadSeconds(phases) + 30).toFixed(0)} s ` +
  "(load phases plus start-up and drains)",
];
const summary = summaryMarkdown({
  header,
  notes,
  configs: [...configs, ...demoConfigs.filter((d) => !configs.some((c) => c.name === d.name))],
  executors: sections,
  demo,
  failures,
  reading: readingNotes(sections, demo?.outcomes ?? [], { compression: compression(phases) }),
});
await Deno.mkdir(values.out, { recursive: true });
const csvHeader = header.map((line) => line.replace(/^- /, ""));
const seriesRows = (pick: (row: ReturnType<typeof perSecond>[number]) => (number | string)[]) =>
  allRuns.flatMap(({ model, sloMs, run }) =>
    run.phases.flatMap((phase) =>
      perSecond(phase.result.timeline, phase.result.seconds, sloMs).map((row) => [
        run.executor,
        model,
        run.config,
        run.seed,
        phase.name,
        row.t,
        ...pick(row),
      ])
    )
  );
const round = (v: number) => Math.round(v * 10) / 10;
await Deno.writeTextFile(
  join(values.out, "throughput.csv"),
  toCsv(
    ["executor", "model", "config", "seed", "phase", "t_s", "requests_s", "tokens_s", "good_s"],
    seriesRows((row) => [row.requestsPerS, row.tokensPerS, row.goodPerS]),
    csvHeader,
  ),
);
await Deno.writeTextFile(
  join(values.out, "latency.csv"),
  toCsv(
    [
      "executor",
      "model",
      "config",
      "seed",
      "phase",
      "t_s",
      "p50_ms",
      "p90_ms",
      "p99_ms",
      "mean_ms",
    ],
    seriesRows((row) => [round(row.p50), round(row.p90), round(row.p99), round(row.mean)]),
    csvHeader,
  ),
);
await Deno.writeTextFile(join(values.out, "summary.md"), summary);
console.log("\n" + summary);
log(
  `wrote ${
    ["throughput.csv", "latency.csv", "summary.md"].map((f) => join(values.out, f)).join(", ")
  }`,
);
Deno.exit(0);
