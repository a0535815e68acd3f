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
import { parseCli } from "../../cli/cli_args.ts";
import { BEFORE_AFTER_CLI } from "./cli.ts";
import { generateModel } from "../../model/generate.ts";
import { BENCH_PRESET } from "../../model/presets.ts";
import { loadDemoTraffic } from "../../model/traffic.ts";
import { loadManifest } from "../../../gpu-backend/server/start_backend.ts";
import { calibrateLayerFromOrt } from "../../../gpu-backend/layer/calibrate_layer.ts";
import { expertFileBytes } from "../../../gpu-backend/residency/expert_bytes.ts";
import { slotsPerBackend } from "../../../router/control/balancer/plan_math.ts";
import type { ModelManifest } from "../../../shared/model_manifest.ts";
import { benchModelDir } from "../bench_model.ts";
import { computeLimit } from "../compute_limit.ts";
import { resultsHeader } from "../results_header.ts";
import { type PreparedRequest, prepareWorkload, tokenRange } from "../workload.ts";
import { placementConfigs, type PoolSettings } from "./configs.ts";
import { compression, type PhasePlan, rotate } from "./phases.ts";
import { type ConfigRun, runConfig } from "./run_config.ts";
import type { TestPool } from "../../pool/processes.ts";
import { outcomeOf } from "./outcome.ts";
import { demoTarget, itemTargets } from "./targets.ts";
import { type ExecutorSection, summaryMarkdown } from "./summary.ts";
import { perSecond, toCsv } from "./series.ts";
import { readingNotes } from "./reading.ts";
import { runNotes } from "./notes.ts";

const { values } = parseCli(BEFORE_AFTER_CLI);

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
    rampS: 0.5,
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
    rampS: Number(values.ramp),
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
const tokens = values.tokens === undefined ? null : tokenRange(values.tokens);
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
        ...(tokens ? { tokens } : {}),
      });
      workloadCache.set(key, requests);
    }
    return requests;
  };
}

// Ctrl-C or a kill stops the pool in flight too: its processes would outlive the benchmark.
let running: TestPool | null = null;
const onPool = (pool: TestPool | null) => running = pool;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, async () => {
    log(`${signal}: stopping the pool in flight`);
    await running?.close();
    Deno.exit(130);
  });
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
      perExpertMs: calibration.perExpertMs * deviceScale,
      perRowMs: calibration.perRowMs * deviceScale,
      loadFixedMs: Number(values["load-fixed-ms"]),
      loadMsPerMb: Number(values["load-ms-per-mb"]),
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
          onPool,
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
        `${simulated.fixedMs.toFixed(3)} ms + ${
          simulated.perExpertMs.toFixed(4)
        } ms per routed expert given rows + ${simulated.perRowMs.toFixed(5)} ms per expert row ` +
        (deviceScale === 1
          ? "(MEASURED in this run: "
          : `(ASSUMED ${deviceScale} × the time MEASURED in this run: `) +
        `${calibration!.method}${
          slots !== null && slots !== calibration!.hosted
            ? `; NOTE the pool's plans hold ${slots} slots per backend, calibrated with ${
              calibration!.hosted
            }`
            : ""
        }); an expert's weights load in ${simulated.loadFixedMs} ms (assumed) + ${simulated.loadMsPerMb} ms per MiB (${
          simulated.loadMsPerMb === 0.0164
            ? "published: host → device over PCIe 5.0 x16, 64 GB/s"
            : "set with --load-ms-per-mb"
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
          onPool,
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
const header = await resultsHeader({
  command,
  limit: `${Math.round(limit.tokensPerS)} tokens/s per core for ${manifest.name} ` +
    `(single-thread MatMul ${limit.gflops.toFixed(1)} GFLOP/s at batch 256 ÷ ` +
    `${(limit.flopsPerToken / 1e6).toFixed(2)} MFLOP per token)`,
});
const notes = runNotes({
  manifest,
  phases,
  pool: { backends, budgetMb, redundancy, hostedPerBackend },
  seeds,
  concurrency,
  warmClients,
  burstiness,
  zipf: Number(values.zipf),
  tokens,
});
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
