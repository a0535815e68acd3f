// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:prewarm`: the same compressed-day trace with a scheduled 5×
 * event that shifts the request-type mix, served three ways on backends whose memory
 * budget cannot hold every expert — no plan and no pre-warm; the reactive balancer alone;
 * the reactive balancer plus the pre-warm job — and forecast accuracy of every forecaster
 * on the trace at 10–60 minute horizons.
 *
 * Time compression. The trace (`router/forecast/synthetic_trace.ts`, seeded) is in
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
import { parseArgs } from "node:util";
import { resolveConfig } from "../../shared/config.ts";
import { encodeInferRequest } from "../../shared/infer_request_codec.ts";
import { PlanStore } from "../../router/balancer/plan_store.ts";
import { accuracy, backtest } from "../../router/forecast/backtest.ts";
import { FORECASTERS } from "../../router/forecast/forecasters.ts";
import { syntheticTrace } from "../../router/forecast/synthetic_trace.ts";
import { MemoryLogger } from "../../router/observe/memory_logger.ts";
import { PrewarmJob } from "../../router/prewarm/prewarm_job.ts";
import { storeTrafficSource } from "../../router/prewarm/prewarm_sources.ts";
import type { PrewarmDecision } from "../../router/prewarm/prewarm_types.ts";
import { ResidencyClient } from "../../router/prewarm/residency_client.ts";
import { AdvisoryScaler } from "../../router/prewarm/scalers.ts";
import { systemClock } from "../../router/runtime/clock.ts";
import { startRouter } from "../../router/server.ts";
import { emptyModelBucket } from "../../router/traffic/bucket_traffic.ts";
import { TrafficStore } from "../../router/traffic/traffic_store.ts";
import { generateModel } from "../model/generate.ts";
import { createRandom } from "../model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../model/traffic.ts";
import { freePort, type PoolProcess, startProcess } from "../pool/processes.ts";
import { formatTable, quantile, round } from "./stats.ts";
import { drawRows } from "./workload.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    speed: { type: "string", default: "60" },
    rps: { type: "string", default: "8" },
    "budget-mb": { type: "string", default: "96" },
    from: { type: "string", default: "19" },
    to: { type: "string", default: "20.5" },
    seed: { type: "string", default: "7" },
    executor: { type: "string", default: "onnx" },
    model: { type: "string", default: "models/demo" },
    out: { type: "string", default: "out/bench-prewarm.csv" },
    "skip-accuracy": { type: "boolean", default: false },
    "accuracy-only": { type: "boolean", default: false },
  },
});
const speed = Number(values.speed);
const rps = Number(values.rps);
const seed = Number(values.seed);
const HOUR = 3_600_000;
const MINUTE = 60_000;
const TOKEN = "bench-internal-token-0123456789";

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
}

interface RunResult {
  label: string;
  sent: Sent[];
  coldFirstMinute: number;
  coldEvent: number;
  coldBefore: number;
  decisions: PrewarmDecision[];
  residency: string;
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
    parts.push(`${mb(body.used_bytes)}/${mb(body.budget_bytes)} MB, ${body.warm?.length} warm`);
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

async function run(withPrewarm: boolean): Promise<RunResult> {
  const label = withPrewarm ? "with pre-warm" : "without pre-warm";
  const common = {
    SWITCHYARD_MODEL__DIR: modelDir,
    SWITCHYARD_AUTH__INTERNAL_TOKEN: TOKEN,
    SWITCHYARD_LOG__LEVEL: "warn",
    SWITCHYARD_BACKEND__MEMORY_BUDGET_MB: values["budget-mb"],
    ...(values.executor === "simulated" ? { SWITCHYARD_BACKEND__EXECUTOR: "simulated" } : {}),
  };
  const backends = await Promise.all([1, 2].map((i) => {
    const port = freePort();
    return startProcess("gpu-backend/main.ts", {
      url: `http://127.0.0.1:${port}`,
      token: TOKEN,
      env: {
        ...common,
        SWITCHYARD_BACKEND__PORT: String(port),
        SWITCHYARD_BACKEND__ID: `backend-${i}`,
        SWITCHYARD_BACKEND__EXECUTORS: "1",
      },
    });
  }));
  const routerKv = await Deno.openKv(":memory:");
  const seriesKv = await Deno.openKv(":memory:");
  const config = resolveConfig({
    env: {
      ...common,
      SWITCHYARD_ROUTER__HOST: "127.0.0.1",
      SWITCHYARD_ROUTER__PORT: "0",
      SWITCHYARD_ROUTER__BACKENDS: JSON.stringify(backends.map((b) => b.url)),
      SWITCHYARD_ROUTER__HEALTH_INTERVAL: "500ms",
      SWITCHYARD_EXPERT_BALANCER__STRATEGY: "off",
      SWITCHYARD_PREWARM__ENABLED: "false",
    },
  });
  const router = await startRouter(config, { kv: routerKv, logger: new MemoryLogger() });
  try {
    // Until the backends have described the model and named themselves.
    for (let i = 0; i < 100 && router.balancer!.modelShape() === null; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 600));
    const affinity = await measureAffinity(router.url);
    // History up to the replay window, on the simulated clock.
    const sim = { now: replayFrom };
    const store = new TrafficStore(seriesKv, { clock: { now: () => sim.now } });
    await writeBuckets(store, affinity, trace.startMs, replayFrom);
    const plans = new PlanStore(routerKv);
    const job = new PrewarmJob({
      settings: config.prewarm,
      traffic: storeTrafficSource(store, {
        model: () => manifest.name,
        historyMs: 2 * DAY,
        reselectMs: DAY,
      }),
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
      balancer: router.balancer!,
      warmer: new ResidencyClient({ fetch, clock: systemClock, internalToken: TOKEN }),
      scaler: new AdvisoryScaler(),
      backends: () => router.pool.views().map(({ name, url }) => ({ id: name, url })),
      currentPlan: (model) => plans.current(model),
      poolLoad: () => router.load.snapshot(),
      topK: () => manifest.top_k,
      logger: new MemoryLogger(),
    }, { decisionsKept: 1000 });
    // Replay: one tick per simulated minute.
    const sent: Sent[] = [];
    const inFlight = new Set<Promise<void>>();
    const random = createRandom(seed);
    const cursor: Record<string, number> = {};
    const tickMs = MINUTE / speed;
    const t0 = performance.now();
    let coldAtEvent = 0;
    let coldAfterFirst = 0;
    let coldStart = 0;
    let jobRun: Promise<unknown> = Promise.resolve();
    coldStart = await coldStarts(backends);
    for (let simNow = replayFrom; simNow < replayTo; simNow += MINUTE) {
      sim.now = simNow;
      const tickStart = t0 + ((simNow - replayFrom) / MINUTE) * tickMs;
      if (simNow > replayFrom) {
        await writeBuckets(store, affinity, simNow - MINUTE, simNow);
      }
      if (simNow === event.startMs) coldAtEvent = await coldStarts(backends);
      if (simNow === event.startMs + MINUTE) coldAfterFirst = await coldStarts(backends);
      if (withPrewarm) jobRun = jobRun.then(() => job.run(simNow));
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
          sent.push({ sim: simAt, latency: performance.now() - scheduled, ok: response.ok });
        }, () => {
          sent.push({ sim: simAt, latency: performance.now() - scheduled, ok: false });
        }).finally(() => inFlight.delete(task));
        inFlight.add(task);
        next += (-Math.log(1 - random()) / rate) * 1000;
      }
      const idle = end - performance.now();
      if (idle > 0) await new Promise((r) => setTimeout(r, idle));
    }
    await Promise.all(inFlight);
    await jobRun;
    const coldEnd = await coldStarts(backends);
    const residency = await residencySummary(backends);
    return {
      label,
      sent,
      coldFirstMinute: coldAfterFirst - coldAtEvent,
      coldEvent: coldEnd - coldAtEvent,
      coldBefore: coldAtEvent - coldStart,
      decisions: job.decisions(),
      residency,
    };
  } finally {
    await router.close();
    await Promise.all(backends.map((b) => b.kill()));
    routerKv.close();
    seriesKv.close();
  }
}

console.log(
  `bench:prewarm — ${values.executor} executors, 2 backends, model ${manifest.name} ` +
    `(${manifest.layers} layers × ${manifest.experts} experts, top-${manifest.top_k}), budget ` +
    `${values["budget-mb"]} MB per backend; replay ${values.from}:00–${values.to}h of day 3 at ` +
    `${speed} simulated s per real s, ${rps} req/s at the mean rate; event 20:00–21:00 ×5`,
);
if (!values["accuracy-only"]) await replayBoth();

async function replayBoth() {
  const results = [await run(false), await run(true)];

  const p99 = (list: Sent[]) => quantile(list.filter((s) => s.ok).map((s) => s.latency), 0.99);
  const header = [
    "run",
    "requests",
    "errors",
    "steady_p99_ms",
    "first_minute_p99_ms",
    "ratio",
    "cold_starts_first_minute",
    "cold_starts_event",
    "cold_starts_before_event",
    "prewarm_decisions",
    "plan_switches",
  ];
  const rows = results.map((r) => {
    const steady = r.sent.filter((s) =>
      s.sim >= event.startMs - 30 * MINUTE && s.sim < event.startMs
    );
    const first = r.sent.filter((s) => s.sim >= event.startMs && s.sim < event.startMs + MINUTE);
    const acted = r.decisions.filter((d) => d.outcome === "prewarmed").length;
    return [
      r.label,
      r.sent.length,
      r.sent.filter((s) => !s.ok).length,
      round(p99(steady)),
      round(p99(first)),
      round(p99(first) / p99(steady)),
      r.coldFirstMinute,
      r.coldEvent,
      r.coldBefore,
      `${acted}/${r.decisions.length}`,
      r.decisions.filter((d) => d.plan?.action === "switched").length,
    ];
  });
  console.log("\n" + formatTable(header, rows));
  const withRun = results[1]!;
  const firstAction = withRun.decisions.findLast((d) => d.outcome === "prewarmed");
  if (firstAction) {
    const switched = withRun.decisions.filter((d) => d.plan?.action === "switched");
    console.log(
      `plan switches by the job: ${
        switched.map((d) =>
          `version ${d.plan!.version} at ${new Date(d.at).toISOString().slice(11, 16)} (${
            d.plan!.moved
          } replicas moved)`
        ).join(", ") || "none"
      }`,
    );
    console.log(
      `first pre-warm at simulated ${new Date(firstAction.at).toISOString().slice(11, 16)}: ` +
        `${firstAction.reason}; warmed ${
          firstAction.warmed.map((w) =>
            `${w.backend} ${w.warmed.length}+${w.alreadyWarm.length} warm, ` +
            `${w.skipped.length} skipped`
          ).join("; ")
        }`,
    );
  }
  for (const r of results) console.log(`residency at the end, ${r.label}: ${r.residency}`);
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
