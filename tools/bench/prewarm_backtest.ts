/**
 * @module Forecast-driven capacity, backtested on the demo traffic's diurnal ramps: the
 * production pre-warm job (no events: forecast only) against a reactive scaler, both
 * through a virtual pool whose backends take `coldStartMs` to start, replayed bucket by
 * bucket over the last day of a seeded synthetic trace (`tools/traffic/synthetic_trace.ts`,
 * the demo request types, ±60 % diurnal swing).
 *
 * - `forecast`: `PrewarmJob.run()` every bucket (the job's capacity plan, contracts, lead
 *   from the measured cold starts, scale-down after the hold); the traffic source is the
 *   production forecasters on the series (`tools/sim/array_traffic.ts`).
 * - `reactive`: every bucket, when the traffic just seen exceeds the ready pool at the
 *   threshold, ask for what it needs now; scale down after the same hold.
 * - Measured over the last day: buckets under-provisioned (traffic above the ready pool at
 *   the threshold) and overloaded (above 100 % of it), those of them on the rising ramps
 *   (traffic above the same hour's 30 minutes earlier), and backend-hours.
 */
import { silentLogger } from "../../shared/logger.ts";
import { PrewarmJob } from "../../router/control/prewarm/prewarm_job.ts";
import { syntheticTrace } from "../traffic/synthetic_trace.ts";
import { arrayTraffic } from "../sim/array_traffic.ts";
import { VirtualPool, VirtualScaler } from "../sim/capacity_pool.ts";

/** Options of {@linkcode capacityBacktest}. */
export interface CapacityBacktestOptions {
  seed?: number;
  /** Bucket width (ms); default 5 minutes. */
  bucketMs?: number;
  /** Days of history before the replayed day; default 2. */
  historyDays?: number;
  /** A backend's cold start (ms); default 5 minutes (assumed). */
  coldStartMs?: number;
  /** Backends the daily peak needs at the threshold; default 8. */
  peakBackends?: number;
  threshold?: number;
  /** Scale-down hold (ms); default 10 minutes. */
  holdMs?: number;
}

/** One policy's day. */
export interface BacktestOutcome {
  policy: "forecast" | "reactive";
  buckets: number;
  underProvisioned: number;
  overloaded: number;
  /** Of the buckets on rising ramps: under-provisioned ones, and all of them. */
  rampUnder: number;
  rampBuckets: number;
  backendHours: number;
  /** The lead the job planned with (forecast policy). */
  leadMs: number | null;
}

/** Both policies over the last day; see the module doc. */
export async function capacityBacktest(
  options: CapacityBacktestOptions = {},
): Promise<BacktestOutcome[]> {
  return [await replayDay("forecast", options), await replayDay("reactive", options)];
}

async function replayDay(
  policy: "forecast" | "reactive",
  options: CapacityBacktestOptions,
): Promise<BacktestOutcome> {
  const bucketMs = options.bucketMs ?? 300_000;
  const historyDays = options.historyDays ?? 2;
  const threshold = options.threshold ?? 0.8;
  const coldStartMs = options.coldStartMs ?? 300_000;
  const holdMs = options.holdMs ?? 600_000;
  const trace = syntheticTrace({
    days: historyDays + 1,
    seed: options.seed ?? 1,
    bucketMs,
    mix: { chat: 0.5, code: 0.2, translate: 0.15, summarize: 0.15 },
    events: [],
  });
  const rows = 3; // the demo workload's mean request size
  const tokens = trace.buckets.map((b) => b.requests * rows);
  const perSecond = tokens.map((t) => t / (bucketMs / 1000));
  const peak = Math.max(...perSecond);
  const capacity = peak / ((options.peakBackends ?? 8) * threshold);
  const floor = 2;
  const dayStart = trace.startMs + historyDays * 86_400_000;
  let now = dayStart;
  const initial = Array.from({ length: floor }, (_, i) => `http://b-${i + 1}`);
  const pool = new VirtualPool(initial);
  const scaler = new VirtualScaler({ now: () => now, coldStartMs: () => coldStartMs, initial });
  const seen = () => tokens.slice(0, Math.floor((now - trace.startMs) / bucketMs));
  let job: PrewarmJob | undefined;
  if (policy === "forecast") {
    job = new PrewarmJob({
      settings: {
        enabled: true,
        horizon: 15 * 60_000,
        threshold,
        lead_time: 3_600_000,
        capacity_per_backend: capacity,
        min_backends: floor,
        scale_down_hold: holdMs,
        track_interval: bucketMs,
      },
      traffic: arrayTraffic(seen, trace.startMs, {
        bucketMs,
        historyDays,
        mix: () => ({}),
        affinity: {},
      }),
      events: { upcoming: () => Promise.resolve([]) },
      balancer: {
        modelShape: () => ({ name: "demo", layers: 1, experts: 8, groups: 1 }),
        activateStaged: () => Promise.reject(new Error("no placement in this backtest")),
      },
      placement: {
        propose: () => {
          throw new Error("no placement in this backtest");
        },
        stage: () => Promise.reject(new Error("no placement in this backtest")),
      },
      scaler,
      pool,
      currentPlan: () => Promise.resolve(null),
      poolLoad: () => null,
      floor,
      clock: { now: () => now, setTimeout: () => 0, clearTimeout: () => {} },
      logger: silentLogger,
    });
    // Cold starts measured before (20 earlier scale-ups).
    for (let i = 0; i < 20; i++) {
      job.capacity.recordColdStart({
        backend: `b${i}`,
        at: 0,
        readyMs: coldStartMs,
        expertLoadMs: 0,
      });
    }
  }
  let lowSince: number | null = null;
  let desired = floor;
  const out: BacktestOutcome = {
    policy,
    buckets: 0,
    underProvisioned: 0,
    overloaded: 0,
    rampUnder: 0,
    rampBuckets: 0,
    backendHours: 0,
    leadMs: job?.lead().leadMs ?? null,
  };
  const first = Math.round((dayStart - trace.startMs) / bucketMs);
  const lag = Math.round(1_800_000 / bucketMs);
  for (let i = first; i < tokens.length; i++) {
    now = trace.startMs + i * bucketMs;
    if (job) {
      await job.run(now);
    } else {
      // Reactive: what the last bucket needed, asked for now; down after the hold.
      for (const b of await scaler.ready()) {
        if (!pool.members.some((m) => m.url === b.url)) pool.add(b.url, {});
      }
      const needed = Math.max(floor, Math.ceil(perSecond[i - 1]! / (capacity * threshold) - 1e-9));
      if (needed > desired) {
        desired = needed;
        lowSince = null;
        await scaler.scale(scaleRequest(desired, scaler.running(), []));
      } else if (needed < desired) {
        lowSince ??= now;
        if (now - lowSince >= holdMs) {
          const extra = pool.members.map((m) => m.url).filter((u) => !initial.includes(u)).reverse()
            .slice(0, desired - needed);
          for (const url of extra) pool.remove(url);
          desired = needed;
          await scaler.scale(scaleRequest(desired, scaler.running(), extra));
        }
      } else lowSince = null;
    }
    // The bucket [now, now + bucket) on the pool ready at its start.
    const ready = pool.members.filter((m) => m.role === "active").length;
    const demand = perSecond[i]!;
    const ramp = demand > perSecond[i - lag]!;
    out.buckets++;
    if (ramp) out.rampBuckets++;
    if (demand > ready * capacity * threshold) {
      out.underProvisioned++;
      if (ramp) out.rampUnder++;
    }
    if (demand > ready * capacity) out.overloaded++;
    out.backendHours += (scaler.running() * bucketMs) / 3_600_000;
  }
  await job?.stop();
  if (job) out.leadMs = job.lead().leadMs;
  return out;
}

function scaleRequest(target: number, current: number, remove: string[]) {
  return {
    model: "demo",
    contract: null,
    current,
    target,
    readyBy: null,
    remove,
    predictedTokensPerS: null,
    capacityPerBackend: null,
    threshold: 0.8,
    reason: "reactive",
  };
}

if (import.meta.main) {
  const { parseCli } = await import("../cli/cli_args.ts");
  const { formatTable, round } = await import("./stats.ts");
  const { values } = parseCli({
    name: "deno task bench:prewarm-backtest",
    summary: "Forecast-driven capacity (the production pre-warm job, no events) vs a reactive\n" +
      "scaler over the last day of the demo traffic's diurnal trace, backends with a cold start.",
    options: {
      seeds: { type: "string", default: "1,2,3", value: "<list>", description: "trace seeds" },
      "cold-start": {
        type: "string",
        default: "5",
        value: "<min>",
        description: "cold start (assumed)",
      },
      "peak-backends": {
        type: "string",
        default: "8",
        value: "<n>",
        description: "at the daily peak",
      },
    },
  });
  const rows: (string | number)[][] = [];
  for (const seed of values.seeds.split(",").map(Number)) {
    for (
      const r of await capacityBacktest({
        seed,
        coldStartMs: Number(values["cold-start"]) * 60_000,
        peakBackends: Number(values["peak-backends"]),
      })
    ) {
      rows.push([
        seed,
        r.policy,
        r.buckets,
        r.underProvisioned,
        r.overloaded,
        `${r.rampUnder}/${r.rampBuckets}`,
        round(r.backendHours, 1),
        r.leadMs === null ? "-" : round(r.leadMs / 60_000, 2),
      ]);
    }
  }
  // deno-lint-ignore no-console
  console.log(formatTable(
    [
      "seed",
      "policy",
      "5-min buckets",
      "under-provisioned (> 80 %)",
      "overloaded (> 100 %)",
      "ramp buckets under-provisioned",
      "backend-hours",
      "lead (min)",
    ],
    rows,
  ));
}
