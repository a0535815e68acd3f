// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:prewarm`: the same compressed-day trace with a scheduled 5×
 * event that shifts the request-type mix, served three ways on backends whose memory
 * budget cannot hold every expert — no plan and no pre-warm; the reactive balancer alone;
 * the reactive balancer plus the pre-warm job — and forecast accuracy of every forecaster
 * on the trace at 10–60 minute horizons.
 *
 * Time compression. The trace (`tools/traffic/synthetic_trace.ts`, seeded) is in
 * simulated time. Days before the replay window are written straight into a traffic
 * store (KV, 1-minute buckets) as history. The replay window (default 19:00–20:30 of the
 * last day; the event is 20:00–21:00, lead time 1 h) is played against real processes
 * at `--speed` simulated seconds per real second (default 60: one simulated minute per
 * real second, one simulated hour per real minute). Every simulated minute (one tick)
 * the bench writes the bucket that just closed and — in the pre-warm run — calls the
 * exported cron handler (`PrewarmJob.run(simNow)`) with the simulated time, so the
 * forecast, the event's lead time and the job's decisions all move on the compressed
 * clock. (Deno.cron fires once per real minute: far too slow for a compressed day.)
 * Request rates are NOT compressed: the bench sends `--rps` real requests/s at the
 * trace's mean rate, following the trace's shape (×5 during the event) and its mix.
 *
 * The three runs (same trace, seed and request stream):
 * - `no plan, no pre-warm`: `expert_balancer.strategy: off`; every backend hosts every
 *   expert and its LRU residency under the budget decides what is warm.
 * - `reactive`: the `dynamic` balancer as in production — it re-plans from the observed
 *   expert load (EWMA over `window`) every `adjust_interval` when balancedness falls below
 *   `threshold` — and no pre-warm job.
 * - `reactive + pre-warm`: the same balancer, plus the job every simulated minute, its
 *   predicted load blended into the balancer's input as `startRouter` does.
 * The reactive balancer is built by `reactive_balancer.ts` (see there why) and ticks on a
 * {@linkcode CompressedClock}: `adjust_interval` and `window` are production's values in
 * simulated time (default 60 s each, i.e. one real second at 60×), not real time.
 *
 * Residency. With a plan, each backend stages (loads) every expert the plan places there
 * before the plan is activated, and those experts are pinned: the budget never evicts
 * them (`gpu-backend/residency/eviction_policy.ts`). So in both reactive runs a request
 * only reaches warm experts and the budget binds only on experts no plan places there;
 * a re-plan's cost is the experts it newly loads while serving (`moved`) and the minutes
 * the old placement serves the new mix. The report counts both.
 *
 * Processes: 2 backends (`gpu-backend/main.ts`, real ONNX Runtime on the demo model, or
 * `--executor simulated`) with `backend.memory_budget_mb` (default 96 MiB: 45 of the 64
 * demo experts of 2.1 MiB; a plan's share, 40, fits); the router runs in this process
 * (`startRouter`, its own balancer `off`).
 */
import { join } from "node:path";
import { existsSync } from "node:fs";
import { resolveConfig } from "../../shared/config.ts";
import { encodeInferRequest } from "../../shared/infer_request_codec.ts";
import type { DecisionRecord } from "../../router/control/balancer/balancer_types.ts";
import { accuracy, backtest } from "../../router/control/forecast/backtest.ts";
import { FORECASTERS } from "../../router/control/forecast/forecasters.ts";
import { syntheticTrace } from "../traffic/synthetic_trace.ts";
import { MemoryLogger } from "../../shared/logging/memory_logger.ts";
import { PrewarmJob } from "../../router/control/prewarm/prewarm_job.ts";
import { storeTrafficSource } from "../../router/control/prewarm/prewarm_sources.ts";
import { comparisonMape, ForecastComparison, type Predictions } from "./forecast_compare.ts";
import type { PrewarmDecision } from "../../router/control/prewarm/prewarm_types.ts";
import { placementPort } from "../../router/control/prewarm/create_prewarm.ts";
import { PlanClient } from "../../router/control/balancer/plan_client.ts";
import { AdvisoryScaler } from "../../router/control/prewarm/scalers.ts";
import { systemClock } from "../../router/runtime/clock.ts";
import { startRouter } from "../../router/wire/server.ts";
import { emptyModelBucket } from "../../router/control/traffic/bucket_traffic.ts";
import { TrafficStore } from "../../router/control/traffic/traffic_store.ts";
import { generateModel } from "../model/generate.ts";
import { createRandom } from "../model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../model/traffic.ts";
import type { PoolProcess } from "../pool/processes.ts";
import { startBenchBackend } from "./baseline/serving.ts";
import { formatTable, quantile, round } from "./stats.ts";
import { drawRows } from "./workload.ts";
import { CompressedClock } from "./compressed_clock.ts";
import { type ReactiveBalancer, startReactiveBalancer } from "./reactive_balancer.ts";
import { parseCli } from "../cli/cli_args.ts";

const { values } = parseCli({
  name: "deno task bench:prewarm",
  summary:
    "One compressed day with a scheduled 5× event, served with no plan, the reactive balancer,\nand the reactive balancer plus the pre-warm job: cold starts and first-minute p99; and\nforecast accuracy per model on the trace.",
  options: {
    speed: {
      type: "string",
      default: "60",
      value: "<x>",
      description: "simulated seconds per real second",
    },
    rps: {
      type: "string",
      default: "8",
      value: "<req/s>",
      description: "real requests per second at the trace's mean rate",
    },
    "budget-mb": {
      type: "string",
      default: "96",
      value: "<MiB>",
      description: "backend.memory_budget_mb (expert residency)",
    },
    from: {
      type: "string",
      default: "19",
      value: "<hour>",
      description: "replay window start on the last day",
    },
    to: { type: "string", default: "20.5", value: "<hour>", description: "replay window end" },
    seed: { type: "string", default: "7", value: "<n>", description: "trace seed" },
    executor: {
      type: "string",
      default: "onnx",
      value: "<onnx|simulated>",
      description: "real onnxruntime Workers or simulated device time",
    },
    model: {
      type: "string",
      default: "models/demo",
      value: "<dir>",
      description: "model directory",
    },
    out: {
      type: "string",
      default: "out/bench-prewarm.csv",
      value: "<file>",
      description: "CSV to write",
    },
    "skip-accuracy": {
      type: "boolean",
      default: false,
      description: "skip the forecast accuracy part",
    },
    "accuracy-only": {
      type: "boolean",
      default: false,
      description: "only the forecast accuracy part",
    },
    runs: {
      type: "string",
      default: "no_plan,reactive,reactive_prewarm",
      value: "<list>",
      description: "runs to serve, comma-separated",
    },
    "adjust-interval": {
      type: "string",
      default: "60s",
      value: "<time>",
      description: "the reactive balancer's adjust_interval, in simulated time",
    },
    window: {
      type: "string",
      default: "60s",
      value: "<time>",
      description: "the reactive balancer's EWMA window, in simulated time",
    },
  },
});
const speed = Number(values.speed);
const rps = Number(values.rps);
const seed = Number(values.seed);
const HOUR = 3_600_000;
const MINUTE = 60_000;
const TOKEN = "bench-internal-token-0123456789";
/** Real ms between the router's load rounds (15 simulated s at 60×). */
const LOAD_INTERVAL_MS = 250;

// The model and its request types.
const modelDir = values.model;
if (!existsSync(join(modelDir, "moe.json"))) await generateModel(modelDir, {});
const manifest = JSON.parse(await Deno.readTextFile(join(modelDir, "moe.json")));
const traffic = (await loadDemoTraffic(modelDir))!;

// The trace: 3 days, a 5× event 20:00–21:00 on the last day that moves traffic from
// chat/translate/summarize towards code/math (different experts).
const DAY = 86_400_000;
const trace = syntheticTrace({
  days: 3,
  seed,
  baseRps: 10,
  mix: { chat: 0.5, translate: 0.3, summarize: 0.2 },
  events: [{
    startMs: Date.UTC(2024, 0, 3, 20),
    endMs: Date.UTC(2024, 0, 3, 21),
    multiplier: 5,
    mix: { code: 0.6, math: 0.3, chat: 0.1 },
  }],
});
const event = trace.events[0]!;
const replayFrom = Date.UTC(2024, 0, 3) + Number(values.from) * HOUR;
const replayTo = Date.UTC(2024, 0, 3) + Number(values.to) * HOUR;
const meanRows = 3; // drawRows(): 1 + geometric(p = 1/3), capped at 16 — mean ≈ 3

/** Pre-encoded requests per type (binary), cycled by the sender. */
function prepare(type: string, count: number) {
  const random = createRandom(seed * 31 + type.length);
  return Array.from({ length: count }, () => {
    const rows = drawRows(random, 16);
    const tokens = demoTokens(traffic, type, rows, random);
    const { body, headerLength } = encodeInferRequest(tokens, manifest.d_model, {
      requestType: type,
      binaryInput: true,
      binaryOutputs: true,
    });
    return {
      body,
      rows,
      headers: {
        "content-type": "application/octet-stream",
        "inference-header-content-length": String(headerLength),
      },
    };
  });
}
const requests = Object.fromEntries(traffic.request_types.map((t) => [t, prepare(t, 128)]));

/** Expert selections per type (`[layer][expert]` per token), measured through the router. */
async function measureAffinity(url: string): Promise<Record<string, number[][]>> {
  const random = createRandom(99);
  const result: Record<string, number[][]> = {};
  for (const type of traffic.request_types) {
    const counts = Array.from(
      { length: manifest.layers },
      () => new Array(manifest.experts).fill(0),
    );
    const rows = 64;
    const { body } = encodeInferRequest(demoTokens(traffic, type, rows, random), manifest.d_model, {
      requestType: type,
      outputs: ["expert_ids"],
    });
    const response = await fetch(`${url}/v2/models/${manifest.name}/infer`, {
      method: "POST",
      body,
    });
    const answer = await response.json();
    const ids = answer.outputs.find((o: { name: string }) => o.name === "expert_ids").data;
    ids.forEach((expert: number, i: number) => {
      const layer = Math.floor(i / (rows * manifest.top_k));
      counts[layer]![expert]! += 1 / rows;
    });
    result[type] = counts;
  }
  return result;
}

/** Writes trace buckets in [from, to) into `store` (volume; affinity for the last day). */
async function writeBuckets(
  store: TrafficStore,
  affinity: Record<string, number[][]>,
  from: number,
  to: number,
) {
  for (const bucket of trace.buckets) {
    if (bucket.at < from || bucket.at >= to) continue;
    const model = emptyModelBucket();
    for (const [type, requests] of Object.entries(bucket.byType)) {
      const tokens = requests * meanRows;
      model.volume.requests += requests;
      model.volume.tokens += tokens;
      model.volume.types[type] = { requests, tokens };
      if (bucket.at >= replayFrom - 6 * HOUR) {
        const layers = new Map<number, number[]>();
        affinity[type]!.forEach((row, l) => layers.set(l, row.map((v) => v * tokens)));
        model.affinity.set(type, layers);
      }
    }
    await store.write(manifest.name, bucket.at, model);
  }
}

interface Sent {
  sim: number;
  latency: number;
  ok: boolean;
  /** HTTP status, or 0 when the request failed without an answer. */
  status: number;
}

/** The three runs; see the module doc. */
type Mode = "no_plan" | "reactive" | "reactive_prewarm";
const LABELS: Record<Mode, string> = {
  no_plan: "no plan, no pre-warm",
  reactive: "reactive, no pre-warm",
  reactive_prewarm: "reactive + pre-warm",
};

interface RunResult {
  mode: Mode;
  sent: Sent[];
  coldFirstMinute: number;
  coldEvent: number;
  coldBefore: number;
  decisions: PrewarmDecision[];
  switches: DecisionRecord[];
  /** Every balancer decision (ticks and the job's applies), oldest first. */
  balancerDecisions: DecisionRecord[];
  residency: string;
  realSeconds: number;
  /** `expert_balancer.threshold` in force. */
  threshold: number;
  /** Forecast sources side by side (pre-warm run): predictions and observed tokens/s by bucket. */
  forecasts?: { predictions: Map<string, Predictions>; observed: Map<number, number> } | undefined;
}

/** `used/budget MB, warm parts` per backend, for the report. */
async function residencySummary(backends: PoolProcess[]): Promise<string> {
  const parts: string[] = [];
  for (const backend of backends) {
    const response = await fetch(`${backend.url}/v2/residency`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    if (!response.ok) {
      await response.body?.cancel();
      parts.push(`HTTP ${response.status}`);
      continue;
    }
    const body = await response.json();
    const mb = (v: number | null) => v === null ? "∞" : (v / 2 ** 20).toFixed(0);
    const pinned = body.warm?.filter((w: { pinned: boolean }) => w.pinned).length;
    parts.push(
      `${mb(body.used_bytes)}/${mb(body.budget_bytes)} MB, ${body.warm?.length} warm ` +
        `(${pinned} pinned)`,
    );
  }
  return parts.join("; ");
}

async function coldStarts(backends: PoolProcess[]): Promise<number> {
  let total = 0;
  for (const backend of backends) {
    const response = await fetch(`${backend.url}/v2/residency`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    if (!response.ok) {
      await response.body?.cancel();
      continue;
    }
    const body = await response.json();
    for (const stats of Object.values(body.cold_starts ?? {})) {
      total += (stats as { count: number }).count;
    }
  }
  return total;
}

async function run(mode: Mode): Promise<RunResult> {
  const started = performance.now();
  const common = {
    SWITCHYARD_MODEL__DIR: modelDir,
    SWITCHYARD_AUTH__INTERNAL_TOKEN: TOKEN,
    SWITCHYARD_LOG__LEVEL: "warn",
    SWITCHYARD_BACKEND__MEMORY_BUDGET_MB: values["budget-mb"],
    ...(values.executor === "simulated" ? { SWITCHYARD_BACKEND__EXECUTOR: "simulated" } : {}),
  };
  const backends = await Promise.all([1, 2].map((i) =>
    startBenchBackend(common, TOKEN, {
      SWITCHYARD_BACKEND__ID: `backend-${i}`,
      SWITCHYARD_BACKEND__EXECUTORS: "1",
    })
  ));
  const routerKv = await Deno.openKv(":memory:");
  const seriesKv = await Deno.openKv(":memory:");
  const config = resolveConfig({
    env: {
      ...common,
      SWITCHYARD_ROUTER__HOST: "127.0.0.1",
      SWITCHYARD_ROUTER__PORT: "0",
      SWITCHYARD_ROUTER__BACKENDS: JSON.stringify(backends.map((b) => b.url)),
      SWITCHYARD_ROUTER__HEALTH_INTERVAL: "500ms",
      // The router's built-in balancer never acts; the reactive runs bring their own.
      SWITCHYARD_EXPERT_BALANCER__STRATEGY: "off",
      // In simulated time: read by the reactive balancer (reactive_balancer.ts).
      SWITCHYARD_EXPERT_BALANCER__ADJUST_INTERVAL: values["adjust-interval"],
      SWITCHYARD_EXPERT_BALANCER__WINDOW: values.window,
      SWITCHYARD_PREWARM__ENABLED: "false",
    },
  });
  const router = await startRouter(config, {
    kv: routerKv,
    logger: new MemoryLogger(),
    loadIntervalMs: LOAD_INTERVAL_MS,
  });
  // Simulated time: the hour before the replay until the replay starts (re-anchored then).
  const clock = new CompressedClock({ speed, simOrigin: replayFrom - HOUR });
  let job: PrewarmJob | undefined;
  let compare: ForecastComparison | undefined;
  let reactive: ReactiveBalancer | undefined;
  try {
    // Until the backends have described the model and named themselves.
    for (let i = 0; i < 100 && router.balancer!.modelShape() === null; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 600));
    if (mode !== "no_plan") {
      reactive = await startReactiveBalancer({
        config,
        router,
        kv: routerKv,
        clock,
        speed,
        loadIntervalMs: LOAD_INTERVAL_MS,
        logger: new MemoryLogger(),
        ...(mode === "reactive_prewarm"
          ? {
            blend: (model, observed, now) => job ? job.blendLoad(model, observed, now) : observed,
          }
          : {}),
      });
      // Its first tick places the static plan (production's start).
      for (let i = 0; i < 100 && !reactive.balancer.decisions().some(isSwitch); i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const affinity = await measureAffinity(router.url);
    // History up to the replay window, on the simulated clock.
    const sim = { now: replayFrom };
    const store = new TrafficStore(seriesKv, { clock: { now: () => sim.now } });
    await writeBuckets(store, affinity, trace.startMs, replayFrom);
    // Forecast sources: production's (the bucket in progress blended in; lag 0, as this
    // bench writes each bucket whole at its boundary) and settled buckets only.
    const forecastSource = (kind: "blended" | "settled") =>
      storeTrafficSource(store, {
        model: () => manifest.name,
        historyMs: 2 * DAY,
        reselectMs: DAY,
        ...(kind === "blended" ? { partialLagMs: 0 } : { partialBucket: false }),
      });
    if (mode === "reactive_prewarm") {
      compare = new ForecastComparison(
        { blended: forecastSource("blended"), settled: forecastSource("settled") },
        MINUTE,
        config.prewarm.horizon,
      );
      const plans = reactive!.store;
      job = new PrewarmJob({
        settings: config.prewarm,
        traffic: forecastSource("blended"),
        events: {
          upcoming: (now) =>
            Promise.resolve(
              now >= event.endMs ? [] : [{
                name: "promo",
                start: event.startMs,
                end: event.endMs,
                multiplier: event.multiplier,
                mix: event.mix,
              }],
            ),
        },
        balancer: reactive!.balancer,
        placement: placementPort(config, {
          balancer: reactive!.balancer,
          plans,
          client: new PlanClient({ fetch, clock: systemClock, internalToken: TOKEN }),
          budgets: () => new Map(),
          clock: systemClock,
          logger: new MemoryLogger(),
        }),
        scaler: new AdvisoryScaler(),
        pool: router.pool,
        currentPlan: (model) => plans.current(model),
        poolLoad: () => router.load.snapshot(),
        topK: () => manifest.top_k,
        // As the router wires its job: it plans on what the balancer judges.
        observedExpertLoad: (model) => reactive!.observed(model),
        clock: systemClock,
        logger: new MemoryLogger(),
      }, { decisionsKept: 1000 });
    }
    // Replay: one tick per simulated minute.
    const sent: Sent[] = [];
    const inFlight = new Set<Promise<void>>();
    const random = createRandom(seed);
    const cursor: Record<string, number> = {};
    const tickMs = MINUTE / speed;
    let coldAtEvent = 0;
    let coldAfterFirst = 0;
    let jobRun: Promise<unknown> = Promise.resolve();
    const coldStart = await coldStarts(backends);
    const t0 = performance.now();
    clock.anchor(replayFrom, t0);
    for (let simNow = replayFrom; simNow < replayTo; simNow += MINUTE) {
      sim.now = simNow;
      const tickStart = t0 + ((simNow - replayFrom) / MINUTE) * tickMs;
      if (simNow > replayFrom) {
        await writeBuckets(store, affinity, simNow - MINUTE, simNow);
      }
      if (simNow === event.startMs) coldAtEvent = await coldStarts(backends);
      if (simNow === event.startMs + MINUTE) coldAfterFirst = await coldStarts(backends);
      if (job) jobRun = jobRun.then(() => job!.run(simNow));
      if (compare) jobRun = jobRun.then(() => compare!.record(simNow));
      // Poisson arrivals over this tick at the trace's rate and mix.
      const rate = (trace.rateAt(simNow) / 10) * rps; // the trace's mean rate is 10/s
      const mix = Object.entries(trace.mixAt(simNow));
      let next = Math.max(tickStart, performance.now());
      const end = tickStart + tickMs;
      while (next < end) {
        const wait = next - performance.now();
        if (wait > 1) await new Promise((r) => setTimeout(r, wait - 0.5));
        let u = random();
        const type = mix.find(([, share]) => (u -= share) < 0)?.[0] ?? mix[0]![0];
        const pool = requests[type]!;
        const request = pool[(cursor[type] = (cursor[type] ?? 0) + 1) % pool.length]!;
        const scheduled = next;
        const simAt = simNow;
        const task = fetch(`${router.url}/v2/models/${manifest.name}/infer`, {
          method: "POST",
          body: request.body,
          headers: request.headers,
        }).then(async (response) => {
          await response.arrayBuffer();
          sent.push({
            sim: simAt,
            latency: performance.now() - scheduled,
            ok: response.ok,
            status: response.status,
          });
        }, () => {
          sent.push({ sim: simAt, latency: performance.now() - scheduled, ok: false, status: 0 });
        }).finally(() => inFlight.delete(task));
        inFlight.add(task);
        next += (-Math.log(1 - random()) / rate) * 1000;
      }
      const idle = end - performance.now();
      if (idle > 0) await new Promise((r) => setTimeout(r, idle));
    }
    await Promise.all(inFlight);
    await jobRun;
    await reactive?.stop();
    const coldEnd = await coldStarts(backends);
    const residency = await residencySummary(backends);
    const observed = new Map<number, number>();
    for (const from of compare?.predictions.get("settled")?.keys() ?? []) {
      const [tokens] = await store.values(
        { kind: "tokens", model: manifest.name },
        from,
        from + MINUTE,
      );
      observed.set(from, (tokens ?? 0) / 60);
    }
    return {
      forecasts: compare === undefined ? undefined : { predictions: compare.predictions, observed },
      mode,
      sent,
      coldFirstMinute: coldAfterFirst - coldAtEvent,
      coldEvent: coldEnd - coldAtEvent,
      coldBefore: coldAtEvent - coldStart,
      decisions: job?.decisions() ?? [],
      switches: (reactive?.balancer.decisions() ?? []).filter(isSwitch).reverse(),
      balancerDecisions: (reactive?.balancer.decisions() ?? []).reverse(),
      residency,
      realSeconds: (performance.now() - started) / 1000,
      threshold: config.expert_balancer.threshold,
    };
  } finally {
    await reactive?.stop();
    await router.close();
    await Promise.all(backends.map((b) => b.kill()));
    routerKv.close();
    seriesKv.close();
  }
}

/** A decision that changed the placement (a plan switch). */
function isSwitch(d: DecisionRecord): boolean {
  return d.outcome === "switched" || d.outcome === "activate_partial";
}

/** `HH:MM` of a simulated instant. */
function hhmm(at: number): string {
  return new Date(at).toISOString().slice(11, 16);
}

const runs = values.runs.split(",").map((m) => m.trim()) as Mode[];
for (const mode of runs) {
  if (!(mode in LABELS)) {
    throw new TypeError(`Cannot run bench: --runs: unknown run "${mode}" (${Object.keys(LABELS)})`);
  }
}
console.log(
  `bench:prewarm — ${values.executor} executors, 2 backends, model ${manifest.name} ` +
    `(${manifest.layers} layers × ${manifest.experts} experts, top-${manifest.top_k}), budget ` +
    `${values["budget-mb"]} MB per backend; replay ${values.from}–${values.to}h of day 3 at ` +
    `${speed} simulated s per real s, ${rps} req/s at the mean rate; event 20:00–21:00 ×5; ` +
    `reactive balancer: adjust_interval ${values["adjust-interval"]}, window ${values.window} ` +
    `(simulated), load rounds every ${LOAD_INTERVAL_MS} ms real (${
      LOAD_INTERVAL_MS * speed / 1000
    } s simulated)`,
);
if (!values["accuracy-only"]) await replayAll();

async function replayAll() {
  const results: RunResult[] = [];
  for (const mode of runs) {
    results.push(await run(mode));
    const last = results.at(-1)!;
    console.log(`  ${LABELS[mode]}: done in ${last.realSeconds.toFixed(0)} s`);
  }

  const p99 = (list: Sent[]) => quantile(list.filter((s) => s.ok).map((s) => s.latency), 0.99);
  const inEvent = (at: number) => at >= event.startMs && at < replayTo;
  const inFirst = (at: number) => at >= event.startMs && at < event.startMs + MINUTE;
  const eventMinutes = Math.round((Math.min(replayTo, event.endMs) - event.startMs) / MINUTE);
  const header = [
    "run",
    "requests",
    "errors",
    "steady_p99_ms",
    "first_minute_p99_ms",
    "ratio",
    "cold_starts_first_minute",
    `cold_starts_event_${eventMinutes}min`,
    "cold_starts_before_event",
    "switches_before_event",
    "switches_in_event",
    "experts_loaded_first_minute",
    `experts_loaded_event_${eventMinutes}min`,
    "first_replan_after_onset_min",
    "min_balancedness_event",
    "prewarm_decisions",
  ];
  const rows = results.map((r) => {
    const steady = r.sent.filter((s) =>
      s.sim >= event.startMs - 30 * MINUTE && s.sim < event.startMs
    );
    const first = r.sent.filter((s) => inFirst(s.sim));
    const acted = r.decisions.filter((d) => d.outcome === "planned").length;
    const before = r.switches.filter((d) => d.at < event.startMs);
    const during = r.switches.filter((d) => inEvent(d.at));
    const moved = (list: DecisionRecord[]) => list.reduce((sum, d) => sum + (d.moved ?? 0), 0);
    const byTrigger = (list: DecisionRecord[]) =>
      `${list.filter((d) => d.trigger === "balancer").length}+${
        list.filter((d) => d.trigger === "admin").length
      }`;
    const replan = during.find((d) => d.trigger === "balancer");
    // The balancer's view of the plan in force on the observed load, at each tick in the event.
    const seen = r.balancerDecisions.filter((d) =>
      d.trigger === "balancer" && inEvent(d.at) && d.before !== null
    ).map((d) => d.before!);
    return [
      LABELS[r.mode],
      r.sent.length,
      r.sent.filter((s) => !s.ok).length,
      round(p99(steady)),
      round(p99(first)),
      round(p99(first) / p99(steady)),
      r.coldFirstMinute,
      r.coldEvent,
      r.coldBefore,
      r.mode === "no_plan" ? "-" : byTrigger(before),
      r.mode === "no_plan" ? "-" : byTrigger(during),
      r.mode === "no_plan" ? "-" : moved(during.filter((d) => inFirst(d.at))),
      r.mode === "no_plan" ? "-" : moved(during),
      replan === undefined ? "-" : round((replan.at - event.startMs) / MINUTE, 1),
      seen.length === 0 ? "-" : round(Math.min(...seen), 3),
      r.mode === "reactive_prewarm" ? `${acted}/${r.decisions.length}` : "-",
    ];
  });
  console.log("\n" + formatTable(header, rows));
  console.log(
    "switches: reactive+job (balancer ticks + the job's applies); experts_loaded: replicas " +
      "the switches made backends load (staged before activation, never cold starts); " +
      "first_replan: minutes after the onset of the first reactive switch (- = none before the " +
      "replay ends); min_balancedness_event: lowest balancedness (mean/max) the reactive " +
      "balancer saw for the plan in force during the event (it re-plans below threshold " +
      `${results[0]!.threshold})`,
  );
  for (const r of results) {
    const errors = new Map<number, number>();
    for (const s of r.sent) if (!s.ok) errors.set(s.status, (errors.get(s.status) ?? 0) + 1);
    const list = [...errors].map(([status, n]) => `${status === 0 ? "no answer" : status}×${n}`);
    console.log(
      `${LABELS[r.mode]}: residency at the end ${r.residency}` +
        (list.length > 0 ? `; errors ${list.join(", ")}` : "") +
        (r.switches.length > 0
          ? `; switches ${
            r.switches.map((d) =>
              `${hhmm(d.at)} ${
                d.trigger === "balancer" ? "reactive" : "job"
              } v${d.version} (${d.moved} moved)`
            ).join(", ")
          }`
          : ""),
    );
  }
  const withRun = results.find((r) => r.mode === "reactive_prewarm");
  for (
    const d of [...(withRun?.decisions ?? [])].reverse().filter((d) =>
      d.contract?.stagedVersion != null
    )
  ) {
    console.log(`job switch at simulated ${hhmm(d.at)}: ${d.reason}`);
  }
  const firstAction = withRun?.decisions.findLast((d) => d.outcome === "planned");
  if (firstAction) {
    console.log(
      `first pre-warm at simulated ${hhmm(firstAction.at)}: ${firstAction.reason}`,
    );
  }
  // The job's own forecast check: predicted vs later-observed tokens/s per bucket.
  const checks = (withRun?.decisions ?? []).flatMap((d) => d.check ? [d.check] : []);
  const mape = (list: typeof checks) => {
    const done = list.filter((c) => c.error !== null);
    return done.length === 0
      ? "n/a"
      : `${round(100 * done.reduce((sum, c) => sum + Math.abs(c.error!), 0) / done.length, 1)} % ` +
        `over ${done.length}`;
  };
  const zero = checks.filter((c) => c.predictedTokensPerS === 0 && (c.observedTokensPerS ?? 0) > 0);
  console.log(
    `pre-warm prediction checks: MAPE before the event ${
      mape(checks.filter((c) => c.to <= event.startMs))
    }, during it ${mape(checks.filter((c) => c.from >= event.startMs && c.to <= event.endMs))}; ` +
      `predicted 0 while traffic flowed: ${zero.length} of ${checks.length}`,
  );
  if (withRun?.forecasts) {
    const { predictions, observed } = withRun.forecasts;
    const windows: [string, (from: number) => boolean][] = [
      ["before the event", (f) => f + MINUTE <= event.startMs],
      ["event onset (first 10 min)", (f) => f >= event.startMs && f < event.startMs + 10 * MINUTE],
      ["whole replay", () => true],
    ];
    const text = [...predictions].map(([name, list]) =>
      `${name} ` + windows.map(([label, inWindow]) => {
        const m = comparisonMape(list, (f) => observed.get(f) ?? 0, inWindow);
        return `${label} ${
          m.mape === null ? "n/a" : `${round(100 * m.mape, 1)} %`
        } over ${m.count}`;
      }).join(", ")
    );
    console.log(
      "forecast for the bucket each tick runs in, side by side (MAPE vs the bucket's tokens/s): " +
        text.join("; "),
    );
  }
  await Deno.mkdir("out", { recursive: true });
  await Deno.writeTextFile(values.out, [header, ...rows].map((r) => r.join(",")).join("\n") + "\n");
  console.log(`wrote ${values.out}`);
}

// Forecast accuracy on the trace's requests series (F's backtest, 8 rolling origins, MASE
// against last value): every model, horizons 10–60 min, on two windows — origins in the
// hours before the event (normal traffic), and origins up to 20:30 (through the event's
// onset; forecasters know nothing of events: the job applies them separately).
if (!values["skip-accuracy"]) {
  const accHeader = ["window", "model", "horizon_min", "mase", "mape_pct"];
  const accRows: (string | number)[][] = [];
  for (
    const [window, until] of [["before_event", event.startMs], ["through_event", replayTo]] as const
  ) {
    const history = trace.buckets.filter((b) => b.at < until).map((b) => b.requests);
    for (const horizon of [10, 30, 60]) {
      const results = backtest(FORECASTERS, history, {
        seasonLength: trace.seasonLength,
        horizon,
        origins: 8,
      });
      for (const result of results) {
        const { mase, mape } = accuracy(result);
        accRows.push([
          window,
          result.name,
          horizon,
          round(mase, 3),
          mape === null ? "-" : round(mape, 1),
        ]);
      }
    }
  }
  console.log("\n" + formatTable(accHeader, accRows));
  const accOut = values.out.replace(/\.csv$/, "-accuracy.csv");
  await Deno.writeTextFile(
    accOut,
    [accHeader, ...accRows].map((r) => r.join(",")).join("\n") + "\n",
  );
  console.log(`wrote ${accOut}`);
}
Deno.exit(0);
