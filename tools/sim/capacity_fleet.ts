/**
 * @module The pre-warm comparison at fleet size, in virtual time: the DeepSeek-V3 shape
 * (256 experts, top-8, 8 groups / top-4) on H200-class accelerators, a pool sized for the
 * normal peak, a declared 5× event with its own mix needing ~144 accelerators, backends
 * that take ~3 minutes to start — the same policies as `bench:prewarm` (B1 reactive queue
 * depth, B2 forecast-only, B3 T−60 min, O oracle, Switchyard's production job).
 *
 * What runs as production code: the pre-warm job (`PrewarmJob`: capacity plan, lead from
 * the cold starts, contracts, standby, staging, activation at the event, draining), the
 * forecasters and their backtest selection, the planner (`proposePlacement`), the
 * balancer's evaluation (`evaluateBalance`, every 2 s on a 60 s EWMA of the served load),
 * balancedness (`backendLoads`). The pool and scaler are virtual (`capacity_pool.ts`).
 *
 * The model (1 s steps, fluid):
 * - A step of B requests of R tokens on D accelerators under placement balance β (Σ mean ÷
 *   Σ max of expert rows per accelerator over layers) takes `58 × max(a(D) + b·rows/β,
 *   hop(rows/β))`, rows = B·R·top-k ÷ D, with the `dsv3x144` scale's derived `a` (hosted
 *   experts' FP8 weights read from HBM), `b` (FP8 peak × MFU) and DeepEP-derived hops
 *   (tools/sim/params.ts: published and assumed figures). Capacity μ = B_max ÷ step, B_max
 *   = 2·D requests; new accelerators serve once a plan places experts on them.
 * - Queue: a backlog served at μ; arrivals whose predicted wait exceeds the SLO are shed
 *   (as the simulator's admission); latency = 1.5 steps + backlog ÷ μ.
 * - Placement balance is computed on 8 of the 58 layers (assumed representative; planning
 *   all 58 at every switch costs minutes), per-type expert affinity from the production
 *   gate on Zipf popularity (`workload.ts`).
 * - Plans stage in the background (missing experts over PCIe 5.0: well under a second at
 *   this size) and never load experts on the request path: that column is 0 by
 *   construction here; the real-stack benchmark measures it.
 */
import { resolveConfig } from "../../shared/config.ts";
import { silentLogger } from "../../shared/logger.ts";
import type { PlacementPlan, PlanBackend } from "../../shared/placement_plan.ts";
import {
  evaluateBalance,
  INITIAL_TRIGGER,
} from "../../router/control/balancer/evaluate_balance.ts";
import { backendLoads, slotsPerBackend } from "../../router/control/balancer/plan_math.ts";
import { proposePlacement, type TriggerState } from "../../router/control/balancer/rebalancer.ts";
import { PrewarmJob } from "../../router/control/prewarm/prewarm_job.ts";
import type { PrewarmEvent, TrafficSource } from "../../router/control/prewarm/prewarm_types.ts";
import { createRandom } from "../model/prng.ts";
import type { PolicyName } from "../bench/prewarm_policies.ts";
import type { RunMeasures } from "../bench/prewarm_report.ts";
import { VirtualPool, VirtualScaler } from "./capacity_pool.ts";
import { arrayTraffic } from "./array_traffic.ts";
import { hopMs, networkShape } from "./devices.ts";
import { acceleratorParams, assumed, type Param, published } from "./params.ts";
import { buildAffinity, SIM_TYPES } from "./workload.ts";

const SECOND = 1000;
const MINUTE = 60_000;
const HOUR = 3_600_000;
/** Event start: day 3, 20:00 (virtual ms). */
const T = 2 * 86_400_000 + 20 * HOUR;

/** The constants of a fleet run, with provenance. */
export const FLEET_PARAMS: Record<string, Param> = {
  layers: published(58, "MoE layers", "DeepSeek-V3 config.json"),
  placementLayers: assumed(8, "layers planned", "representative subset; step time uses all 58"),
  rows: assumed(256, "tokens per request", "the 256xN scales' 128–384 range, mean"),
  coldStart: assumed(
    180_000,
    "ms median backend cold start",
    "issue 28: 3 minutes (image pull + weight load)",
  ),
  coldStartSpread: assumed(0.15, "σ of log cold start", "spread between pods"),
  sloMs: assumed(1000, "ms", "end-to-end budget of one request's 58-layer MoE pass (dsv3x144)"),
  utilisation: assumed(
    0.64,
    "of the initial pool's capacity before the event",
    "0.8 × a pool sized at 0.8 of the daily peak",
  ),
  ewmaWindow: assumed(60_000, "ms", "expert_balancer.window default"),
};

/** The mixes (as the simulator's `event` scenario: 70 % one type during the event). */
const BEFORE_MIX: Record<string, number> = { chat: 0.35, code: 0.15, math: 0.1, docs: 0.4 };
const EVENT_MIX: Record<string, number> = { math: 0.7, chat: 0.3 };

/** Options of {@linkcode simulateFleet}. */
export interface FleetOptions {
  policy: PolicyName;
  seed: number;
  /** Accelerators before the event. */
  initial: number;
  multiplier: number;
  eventMinutes: number;
  beforeMin: number;
  afterMin: number;
  threshold: number;
  holdMs: number;
}

/** One fleet run's measures and timeline. */
export interface FleetResult {
  measures: RunMeasures;
  /** Per minute: accelerators requested (running), ready, in the plan in force. */
  timeline: { at: number; requested: number; ready: number; placed: number }[];
  lead: { leadMs: number; coldStartMs: number | null } | null;
  eventAccelerators: number;
  /** The job's first scale-up: when (ms from T) and why. */
  firstPlanned: { atFromT: number; reason: string } | null;
}

/** One run; see the module doc. */
export async function simulateFleet(o: FleetOptions): Promise<FleetResult> {
  const config = resolveConfig({});
  const shape = {
    layers: FLEET_PARAMS.placementLayers!.value,
    experts: 256,
    topK: 8,
    groups: 8,
    topkGroup: 4,
  };
  const model = { name: "dsv3", layers: shape.layers, experts: 256, groups: 8 };
  const R = FLEET_PARAMS.rows!.value;
  const random = createRandom(o.seed * 104_729);
  const gaussian = () =>
    Math.sqrt(-2 * Math.log(Math.max(random(), 1e-12))) * Math.cos(2 * Math.PI * random());
  const affinity = buildAffinity(shape, {
    seed: o.seed,
    types: SIM_TYPES,
    zipf: 1,
    epochs: 1,
    driftSwap: 0,
    gateTokens: 512,
  });
  const loadOf = (mix: Record<string, number>, tokensPerS: number) =>
    Array.from(
      { length: shape.layers },
      (_, l) =>
        Array.from({ length: 256 }, (_, e) =>
          SIM_TYPES.reduce((sum, type, t) =>
            sum + (mix[type] ?? 0) * tokensPerS * affinity[t]![0]![l]![e]!, 0)),
    );
  // Step 1: the step-time model and the capacity it gives.
  const slots = (d: number) => slotsPerBackend(256, d, config.expert_balancer.redundancy);
  const stepMs = (batch: number, d: number, beta: number) => {
    const device = acceleratorParams(slots(d), "h200");
    const rows = (batch * R * shape.topK) / d / Math.max(beta, 0.05);
    const compute = device.fixedMs.value + device.perRowMs.value * rows;
    const hop = hopMs(networkShape(d, device), rows * device.rowBytes.value);
    return FLEET_PARAMS.layers!.value * Math.max(compute, hop);
  };
  const capacity = (d: number, beta: number) =>
    d === 0 ? 0 : (2 * d) / (stepMs(2 * d, d, beta) / SECOND);
  const balanceOf = (plan: PlacementPlan, loads: number[][]) => {
    const per = backendLoads(plan, loads);
    let mean = 0;
    let max = 0;
    for (const layer of per) {
      mean += layer.reduce((a, b) => a + b, 0) / layer.length;
      max += Math.max(...layer);
    }
    return max === 0 ? 1 : mean / max;
  };
  const urls = Array.from({ length: o.initial }, (_, i) => `http://acc-${i + 1}`);
  const backendsOf = (list: readonly string[]): PlanBackend[] =>
    list.map((url) => ({ id: new URL(url).host, url }));
  const basePlan = (d: readonly PlanBackend[]) =>
    proposePlacement(loadOf(BEFORE_MIX, 1), {
      model,
      backends: d,
      redundancy: config.expert_balancer.redundancy,
      reason: "initial",
    });
  const beta0 = balanceOf(
    { ...basePlan(backendsOf(urls)), version: 1, createdAt: 0 },
    loadOf(BEFORE_MIX, 1),
  );
  const mu0 = capacity(o.initial, beta0);
  const lambda0 = FLEET_PARAMS.utilisation!.value * mu0;
  const perBackendTokens = (mu0 * R) / o.initial;
  const eventAccelerators = Math.ceil(
    (o.multiplier * lambda0 * R) / (perBackendTokens * o.threshold) - 1e-9,
  );
  // Traffic: a diurnal shape around T (the simulator's day curve), the event, its mix.
  const shapeAt = (t: number) => 0.75 - 0.25 * Math.cos((2 * Math.PI * ((t / HOUR) % 24 - 3)) / 24);
  const end = T + o.eventMinutes * MINUTE;
  const inEvent = (t: number) => t >= T && t < end;
  const lambdaAt = (t: number) =>
    (lambda0 * shapeAt(t)) / shapeAt(T - 1) * (inEvent(t) ? o.multiplier : 1);
  const mixAt = (t: number) => inEvent(t) ? EVENT_MIX : BEFORE_MIX;
  // Step 2: the pool, scaler, plan in force, balancer state.
  let now = T - o.beforeMin * MINUTE;
  const pool = new VirtualPool(urls);
  const coldStart = () =>
    FLEET_PARAMS.coldStart!.value * Math.exp(FLEET_PARAMS.coldStartSpread!.value * gaussian());
  const scaler = new VirtualScaler({ now: () => now, coldStartMs: coldStart, initial: urls });
  let version = 1;
  let current: PlacementPlan = { ...basePlan(backendsOf(urls)), version, createdAt: 0 };
  let staged: { plan: PlacementPlan; readyAt: number } | null = null;
  let trigger: TriggerState = INITIAL_TRIGGER;
  let lastSwitchAt: number | null = null;
  let observed = loadOf(BEFORE_MIX, lambdaAt(now) * R);
  let planned: number[][] | null = null;
  const switchTo = (plan: PlacementPlan, initial = false) => {
    current = plan;
    // As the router's balancer: the initial (static) placement does not count.
    if (!initial) lastSwitchAt = now;
  };
  // The production job (switchyard, oracle), on this virtual clock.
  const historyStart = T - 2 * 86_400_000 - 20 * HOUR;
  const minutes: number[] = [];
  for (let t = historyStart; t < now; t += MINUTE) minutes.push(lambdaAt(t + MINUTE / 2) * R * 60);
  const forecastSource = arrayTraffic(() => minutes, historyStart, {
    mix: () => mixAt(now),
    affinity: Object.fromEntries(SIM_TYPES.map((type, t) => [type, affinity[t]![0]!])),
  });
  // B2 re-selects its forecaster every interval (a step shows up in the backtest at once).
  const b2Source = arrayTraffic(() => minutes, historyStart, {
    mix: () => mixAt(now),
    affinity: {},
    reselectMs: 3 * MINUTE,
  });
  const event: PrewarmEvent = {
    name: "promo",
    start: T,
    end,
    multiplier: o.multiplier,
    mix: EVENT_MIX,
  };
  let job: PrewarmJob | undefined;
  if (o.policy === "switchyard" || o.policy === "oracle") {
    const oracle = o.policy === "oracle";
    const traffic: TrafficSource = oracle
      ? {
        ...forecastSource,
        forecastVolume: (at, horizon) => {
          const points = [];
          for (let p = at - (at % MINUTE) + MINUTE; p <= at + horizon; p += MINUTE) {
            const mid = p - MINUTE / 2;
            points.push({
              at: p,
              tokensPerS: (lambdaAt(mid) * R) / (inEvent(mid) ? o.multiplier : 1),
            });
          }
          return Promise.resolve({ points, bucketMs: MINUTE, model: "oracle" });
        },
      }
      : forecastSource;
    job = new PrewarmJob({
      settings: {
        ...config.prewarm,
        threshold: o.threshold,
        capacity_per_backend: perBackendTokens,
        min_backends: o.initial,
        track_interval: 5_000,
        scale_down_hold: oracle ? 0 : o.holdMs,
        ...(oracle ? { cold_start_percentile: 1, lead_margin: 0 } : {}),
      },
      traffic,
      events: { upcoming: (at) => Promise.resolve(at >= end ? [] : [event]) },
      balancer: {
        modelShape: () => model,
        activateStaged: (plan, options) => {
          options.beforeClaim?.();
          if (staged === null || staged.plan.version !== plan.version) {
            return Promise.reject(new Error(`version ${plan.version} is not staged`));
          }
          switchTo(plan);
          staged = null;
          return Promise.resolve({
            version: plan.version,
            previous: null,
            reason: "prewarm",
            moved: 0,
            predicted: { before: null, after: null },
            pendingActivation: [],
          });
        },
      },
      placement: {
        propose: (load, on) =>
          proposePlacement(load, {
            model,
            backends: on,
            redundancy: config.expert_balancer.redundancy,
            reason: "prewarm",
          }),
        stage: (placement) => {
          const plan = { ...placement, version: ++version, createdAt: now };
          staged = { plan, readyAt: now + SECOND };
          return Promise.resolve({
            kind: "staged" as const,
            plan,
            results: plan.backends.map((b) => ({
              backend: b.id,
              staged: plan.version,
              loaded: [],
              ms: 300,
            })),
          });
        },
      },
      scaler,
      pool,
      currentPlan: () => Promise.resolve(current),
      poolLoad: () => ({
        backends: pool.withRole("active").map((b) => ({
          id: b.id,
          stale: false,
          utilisation: 0.5,
          tokensPerS: (Math.min(lambdaAt(now), capacity(current.backends.length, 1)) * R) /
            Math.max(1, current.backends.length),
        })),
      }),
      topK: () => shape.topK,
      observedExpertLoad: () => observed,
      floor: o.initial,
      clock: { now: () => now, setTimeout: () => 0, clearTimeout: () => {} },
      logger: silentLogger,
    }, { decisionsKept: 10 });
    // Cold starts measured earlier (yesterday's scale-ups): 20 draws of the same distribution.
    for (let i = 0; i < 20; i++) {
      job.capacity.recordColdStart({
        backend: `earlier-${i}`,
        at: 0,
        readyMs: coldStart(),
        expertLoadMs: 300,
      });
    }
  }
  // Baselines scale through the same scaler: ready backends join active, drained ones leave.
  const baseline = o.policy === "reactive" || o.policy === "forecast" || o.policy === "seed";
  let desired = o.initial;
  const draining = new Set<string>();
  // The baselines' autoscaler bounds (an HPA's maxReplicas): the event's size + 10 %.
  const maxAccelerators = Math.ceil(eventAccelerators * 1.1);
  const want = async (n: number) => {
    const target = Math.min(maxAccelerators, Math.max(o.initial, n));
    if (target > desired) {
      await scaler.scale({
        ...request,
        current: scaler.running(),
        target: scaler.running() + target - desired,
      });
    } else if (target < desired) {
      const extra = pool.withRole("active").map((b) => b.url).filter((u) => !urls.includes(u))
        .reverse();
      for (const url of extra.slice(0, desired - target)) {
        pool.setRole(url, "draining");
        draining.add(url);
      }
    }
    desired = target;
  };
  const request = {
    model: model.name,
    contract: null,
    current: 0,
    target: 0,
    readyBy: null,
    remove: [] as string[],
    predictedTokensPerS: null,
    capacityPerBackend: perBackendTokens,
    threshold: o.threshold,
    reason: "baseline",
  };
  // Step 3: the loop.
  const stop = T + o.afterMin * MINUTE;
  const samples: { t: number; arrivals: number; latency: number; good: number }[] = [];
  const timeline: FleetResult["timeline"] = [];
  let backlog = 0;
  let accMs = 0;
  let lowSince: number | null = null;
  let firstPlanned: { at: number; reason: string } | null = null;
  const alpha = 1 - Math.exp(-SECOND / FLEET_PARAMS.ewmaWindow!.value);
  const b1Target = (() => {
    // In flight per accelerator at utilisation 0.8 with the base placement (Little's law).
    const lambda = 0.8 * mu0;
    return (lambda *
      (1.5 *
        stepMs(
          Math.min(2 * o.initial, lambda * stepMs(2 * o.initial, o.initial, beta0) / SECOND),
          o.initial,
          beta0,
        ) / SECOND)) / o.initial;
  })();
  for (; now < stop; now += SECOND) {
    const t = now;
    // The minute that just closed joins the series (tokens, the event included).
    if (t % MINUTE === 0 && t - MINUTE >= minutesEnd(historyStart, minutes)) {
      minutes.push(lambdaAt(t - MINUTE / 2) * R * 60);
    }
    // Policies.
    if (job && t % MINUTE === 0) {
      const d = await job.run(t);
      if (d.outcome === "planned" && firstPlanned === null) {
        firstPlanned = { at: t, reason: d.reason };
      }
    }
    if (job && t % 5_000 === 0) await job.capacity.track(t);
    if (baseline) {
      for (const b of await scaler.ready()) {
        if (!pool.members.some((m) => m.url === b.url)) pool.add(b.url, { role: "active" });
      }
      for (const url of [...draining]) {
        if (!current.backends.some((b) => b.url === url)) {
          pool.remove(url);
          draining.delete(url);
          await scaler.scale({
            ...request,
            current: scaler.running(),
            target: scaler.running() - 1,
            remove: [url],
          });
        }
      }
      if (o.policy === "reactive" && t % 15_000 === 0) {
        const inFlight = lambdaAt(t) * (samples.at(-1)?.latency ?? 0) / SECOND;
        const wanted = Math.max(o.initial, Math.ceil(inFlight / b1Target));
        if (wanted > desired) {
          lowSince = null;
          await want(wanted);
        } else if (wanted < desired) {
          lowSince ??= t;
          if (t - lowSince >= 5 * MINUTE) await want(wanted);
        } else lowSince = null;
      }
      if (o.policy === "forecast" && t % (3 * MINUTE) === 0) {
        const f = await b2Source.forecastVolume(t, 3 * MINUTE);
        const peak = Math.max(0, ...(f?.points ?? []).map((p) => p.tokensPerS));
        await want(Math.ceil(peak / (perBackendTokens * o.threshold) - 1e-9));
      }
      if (o.policy === "seed" && t % MINUTE === 0) {
        if (t >= T - HOUR && t < end + o.holdMs) await want(eventAccelerators);
        if (t >= end + o.holdMs) await want(o.initial);
      }
    }
    // The balancer: every 2 s on the EWMA of the served load (the job's prediction blended in).
    const served = loadOf(
      mixAt(t),
      Math.min(lambdaAt(t), capacity(current.backends.length, 1)) * R,
    );
    observed = observed.map((row, l) => row.map((v, e) => v + alpha * (served[l]![e]! - v)));
    planned = job?.blendLoad(model.name, observed, t) ?? observed;
    if (t % 2_000 === 0) {
      const evaluation = evaluateBalance({
        settings: config.expert_balancer,
        trigger,
        now: t,
        lastSwitchAt,
        model,
        backends: pool.withRole("active"),
        current,
        pinned: null,
        loads: planned,
      });
      trigger = evaluation.trigger;
      const plan = evaluation.decision.plan;
      if (evaluation.decision.action !== "none" && plan !== undefined) {
        switchTo(
          { ...plan, version: ++version, createdAt: t },
          evaluation.decision.action === "initial",
        );
      }
    }
    // The step: capacity of the plan in force under the true load of this second.
    const truth = loadOf(mixAt(t), lambdaAt(t) * R);
    const beta = balanceOf(current, truth);
    const mu = capacity(current.backends.length, beta);
    const lambda = lambdaAt(t);
    const wait = mu > 0 ? (backlog / mu) * SECOND : Infinity;
    const admitted = wait > FLEET_PARAMS.sloMs!.value ? 0 : lambda;
    const batch = Math.min(
      2 * current.backends.length,
      Math.max(
        1,
        lambda * stepMs(2 * current.backends.length, current.backends.length, beta) / SECOND,
      ),
    );
    const latency = 1.5 * stepMs(batch, current.backends.length, beta) + wait;
    backlog = Math.max(0, backlog + admitted - mu);
    samples.push({
      t,
      arrivals: lambda,
      latency,
      good: admitted > 0 && latency <= FLEET_PARAMS.sloMs!.value ? admitted : 0,
    });
    if (Math.abs(t - T) <= 90 * MINUTE) accMs += scaler.running() * SECOND;
    if (t % MINUTE === 0) {
      timeline.push({
        at: t,
        requested: scaler.running(),
        ready: scaler.readyCount(),
        placed: current.backends.length,
      });
    }
  }
  await job?.stop();
  const window = (from: number, to: number) =>
    samples.filter((s) => s.t >= T + from && s.t < T + to);
  const p99 = (list: typeof samples) =>
    weightedQuantile(list.map((s) => [s.latency, s.arrivals]), 0.99);
  const first10 = window(0, 10 * MINUTE);
  const lead = job?.lead();
  return {
    measures: {
      requestsFirst10: first10.reduce((sum, s) => sum + s.arrivals, 0),
      goodputFirst10: first10.reduce((sum, s) => sum + s.good, 0) / 600,
      p99First5: p99(window(0, 5 * MINUTE)),
      p99HourBefore: p99(window(-HOUR, 0)),
      backendMinutes: accMs / MINUTE,
      coldStartsFirst5: 0,
    },
    timeline,
    lead: lead ? { leadMs: lead.leadMs, coldStartMs: lead.coldStartMs } : null,
    eventAccelerators,
    firstPlanned: firstPlanned === null ? null : {
      atFromT: (firstPlanned as { at: number }).at - T,
      reason: (firstPlanned as { reason: string }).reason,
    },
  };
}

function minutesEnd(start: number, minutes: readonly number[]): number {
  return start + minutes.length * MINUTE;
}

/** The value below which `q` of the weight lies. */
function weightedQuantile(pairs: [number, number][], q: number): number {
  const list = pairs.filter(([, w]) => w > 0).sort((a, b) => a[0] - b[0]);
  const total = list.reduce((s, [, w]) => s + w, 0);
  if (total === 0) return NaN;
  let seen = 0;
  for (const [v, w] of list) {
    seen += w;
    if (seen >= q * total) return v;
  }
  return list.at(-1)![0];
}
