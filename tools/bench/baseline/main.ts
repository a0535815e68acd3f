// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:baseline`: the data plane against the compute limit, side by
 * side in one run on one machine.
 *
 *   Step 1: the limit — single-thread MatMul GFLOP/s at batch 256 on the model's expert
 *           shapes (the better of `[d, d_ff]` and `[d_ff, d]`) ÷ the model's FLOPs per
 *           token = tokens/s one core computes.
 *   Step 2: per variant (per-expert path on Workers = the old baseline; the layer path on
 *           the main thread and on Workers), per request size (the demo mix of 1–6
 *           tokens, 32 and 256 tokens): the engine in this process, a backend process
 *           called directly, the same backend through a router — closed loop, tokens/s
 *           and tokens per server CPU-second (`/proc/<pid>/stat` of the serving
 *           processes only), router CPU per request, the share of backend CPU inside
 *           onnxruntime runs, and p50 at the lowest load (one client).
 *   Step 3: the layer path's plan-switch rebuild (staging a plan that hosts half the
 *           experts plus replicas).
 *
 * `--out FILE` writes the report (with the command line) to FILE as well.
 */
import { decodeInferRequest } from "../../../shared/infer_request_codec.ts";
import {
  diffWaves,
  inProcessEngine,
  inProcessLoop,
  readiness,
  startServing,
  type Variant,
} from "./serving.ts";
import { type Cell, formatReport, type Report } from "./report.ts";
import type { ModelManifest } from "../../../shared/model_manifest.ts";
import { computeLimit } from "../compute_limit.ts";
import { BENCH_TOKEN, benchModel } from "./bench_model.ts";
import { cpuMsOf } from "../cpu_time.ts";
import { closedLoop } from "../load_generator.ts";
import type { PreparedRequest } from "../workload.ts";
import { DEMO_MODEL_OPTION, parseCli } from "../../cli/cli_args.ts";

const { values } = parseCli({
  name: "deno task bench:baseline",
  summary:
    "The data plane against the compute limit, side by side in one run: the engine in process,\none backend over HTTP and the same backend through a router, per execution variant and request size.",
  options: {
    model: DEMO_MODEL_OPTION,
    duration: {
      type: "string",
      default: "6",
      value: "<s>",
      description: "seconds per closed-loop phase",
    },
    "low-duration": {
      type: "string",
      default: "3",
      value: "<s>",
      description: "seconds of the one-client (lowest load) phase",
    },
    clients: { type: "string", default: "32", value: "<n>", description: "closed-loop clients" },
    sizes: {
      type: "string",
      default: "demo,32,256",
      value: "<list>",
      description: "request sizes: demo (the 1–6 token mix) or a token count",
    },
    variants: {
      type: "string",
      default: "expert-workers,layer-main,layer-workers,layer-main-32",
      value: "<list>",
      description: "execution variants to compare",
    },
    out: { type: "string", value: "<file>", description: "also write the report to this file" },
  },
});
const VARIANTS: Record<string, Variant> = {
  "expert-workers": { name: "per-expert, 2 Workers (old)", execution: "expert", executors: 2 },
  "layer-main": { name: "layer, main thread (new)", execution: "layer", executors: 0 },
  "layer-workers": { name: "layer, 2 Workers", execution: "layer", executors: 2 },
  "layer-main-32": {
    name: "layer, main thread, max 32",
    execution: "layer",
    executors: 0,
    batchingMax: 32,
  },
  "layer-main-fill1": {
    name: "layer, main thread, fill 1 ms",
    execution: "layer",
    executors: 0,
    fillWaitMs: 1,
  },
  "layer-main-fill3": {
    name: "layer, main thread, fill 3 ms",
    execution: "layer",
    executors: 0,
    fillWaitMs: 3,
  },
};
const durationS = Number(values.duration);
const lowDurationS = Number(values["low-duration"]);
const clients = Number(values.clients);
const token = BENCH_TOKEN;
const { manifest, auth, workloads } = await benchModel(values.model, values.sizes);
const decode = (requests: readonly PreparedRequest[]) =>
  requests.map((r) =>
    decodeInferRequest(r.body, {
      model: { name: manifest.name, dModel: manifest.d_model },
      headerLength: Number(r.headers["inference-header-content-length"]),
      maxTokens: 1 << 20,
    })
  );

// Step 1: the compute limit.
const { gflops, flopsPerToken, tokensPerS: limit } = await computeLimit(values.model, manifest);
console.error(`limit: ${gflops.toFixed(1)} GFLOP/s → ${limit.toFixed(0)} tokens/s per core`);

// Step 2: every variant on every path and size.
const cells: Cell[] = [];
const lowLoad: { path: string; variant: string; p50: number }[] = [];
const rebuilds: { variant: string; ms: number; experts: number; startBuildMs: number[] }[] = [];
const p50 = (latencies: number[]) =>
  latencies.sort((a, b) => a - b)[Math.floor(latencies.length / 2)] ?? NaN;
for (const key of values.variants.split(",")) {
  const variant = VARIANTS[key];
  if (!variant) throw new RangeError(`Cannot run variant "${key}": known ${Object.keys(VARIANTS)}`);
  console.error(`${variant.name}: in process`);
  const engine = await inProcessEngine(variant, values.model, manifest);
  const demo = decode(workloads[0]!.requests);
  await inProcessLoop(engine, demo, clients, 1);
  for (const { size, requests } of workloads) {
    const run = await inProcessLoop(engine, decode(requests), clients, durationS);
    cells.push({ path: "engine in process", size, variant: variant.name, ...run });
  }
  const quiet = await inProcessLoop(engine, demo, 1, lowDurationS);
  lowLoad.push({
    path: "engine in process",
    variant: variant.name,
    p50: p50(quiet.result.latencies),
  });
  await engine.close();

  console.error(`${variant.name}: over HTTP`);
  const serving = await startServing(variant, values.model, token);
  const backendPid = serving.backend.child.pid;
  const routerPid = serving.router.child.pid;
  const path = `/v2/models/${manifest.name}/infer`;
  try {
    await closedLoop({
      url: serving.backend.url + path,
      requests: workloads[0]!.requests,
      concurrency: 8,
      durationS: 1,
    });
    for (const { size, requests } of workloads) {
      for (
        const [name, url, pids] of [
          ["backend direct", serving.backend.url, [backendPid]],
          ["via router", serving.router.url, [backendPid, routerPid]],
        ] as const
      ) {
        const before = await readiness(serving.backend.url, token);
        const cpuBefore = cpuMsOf(pids);
        const routerBefore = cpuMsOf([routerPid]);
        const result = await closedLoop({
          url: url + path,
          requests,
          concurrency: clients,
          durationS,
        });
        const cpuMs = cpuMsOf(pids) - cpuBefore;
        const routerMs = cpuMsOf([routerPid]) - routerBefore;
        const after = await readiness(serving.backend.url, token);
        const waves = diffWaves(after.waves ?? [], before.waves ?? []);
        const backendCpuMs = name === "via router" ? cpuMs - routerMs : cpuMs;
        cells.push({
          path: name,
          size,
          variant: variant.name,
          result,
          cpuMs,
          busyMs: after.executor.busyMs - before.executor.busyMs,
          executions: after.executor.executions - before.executor.executions,
          backendCpuMs,
          waves,
          ...(name === "via router"
            ? { routerMsPerRequest: routerMs / Math.max(1, result.ok) }
            : {}),
        });
      }
    }
    for (
      const [name, url] of [["backend direct", serving.backend.url], [
        "via router",
        serving.router.url,
      ]] as const
    ) {
      const quietHttp = await closedLoop({
        url: url + path,
        requests: workloads[0]!.requests,
        concurrency: 1,
        durationS: lowDurationS,
      });
      lowLoad.push({ path: name, variant: variant.name, p50: p50(quietHttp.latencies) });
    }
    // Step 3: the plan-switch rebuild of the layer executables.
    if (variant.execution === "layer") {
      const ready = await readiness(serving.backend.url, token);
      const staged = await stageHalfPlan(serving.backend.url, manifest);
      rebuilds.push({
        variant: variant.name,
        ms: staged.layers_ms,
        experts: staged.experts,
        startBuildMs: (ready.layers ?? []).map((l) => l.build_ms),
      });
    }
  } finally {
    await serving.close();
  }
}

const report: Report = {
  command: `deno task bench:baseline ${Deno.args.join(" ")}`.trim(),
  manifest,
  cores: navigator.hardwareConcurrency,
  cpu: cpuModel(),
  clients,
  durationS,
  meanRows: workloads.map(({ size, requests }) => ({
    size,
    rows: requests.reduce((sum, r) => sum + r.rows, 0) / requests.length,
  })),
  limit: { gflops, flopsPerToken, tokensPerS: limit },
  cells,
  lowLoad,
  rebuilds,
};
const text = formatReport(report);
console.log(text);
if (values.out) await Deno.writeTextFile(values.out, text + "\n");
Deno.exit(0);

/** Stages (never activates) a plan hosting half the experts plus 4 replicas here. */
async function stageHalfPlan(
  url: string,
  m: ModelManifest,
): Promise<{ layers_ms: number; experts: number }> {
  const half = m.experts / 2;
  const extra = Math.min(4, half);
  const slots = half + extra;
  const layer = [
    ...Array.from({ length: half }, (_, e) => e),
    ...Array.from({ length: extra }, (_, e) => half + e),
    ...Array.from({ length: m.experts - half }, (_, e) => half + e),
    ...Array.from({ length: slots - (m.experts - half) }, (_, e) => e),
  ];
  const plan = {
    model: m.name,
    version: 1_000_000,
    createdAt: Date.now(),
    reason: "bench:baseline rebuild",
    backends: [{ id: "bench-backend", url }, { id: "bench-ghost", url: "http://127.0.0.1:9" }],
    slotsPerBackend: slots,
    layers: Array.from({ length: m.layers }, () => ({ phy2log: layer })),
  };
  const response = await fetch(`${url}/v2/plan`, {
    method: "PUT",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify(plan),
  });
  const body = await response.json();
  if (response.status !== 200) {
    throw new Error(`Cannot stage the rebuild plan: ${JSON.stringify(body)}`);
  }
  return { layers_ms: body.layers_ms, experts: slots };
}

function cpuModel(): string {
  try {
    const info = Deno.readTextFileSync("/proc/cpuinfo");
    return /model name\s*:\s*(.+)/.exec(info)?.[1]?.trim() ?? "unknown";
  } catch {
    return "unknown";
  }
}
