/**
 * @module The discrete-event simulator: one pool of accelerators serving a compressed day
 * in virtual time, driving the production control code.
 *
 * Model (see docs/SIMULATION.md for what it assumes and leaves out).
 * - Arrivals: a non-homogeneous Poisson process (thinning) at the scenario's rate; each
 *   request has a type (the mix at its arrival) and a row count. A full admission queue
 *   sheds (429). The entry accelerator is chosen by the production routing policy.
 * - Batching: when the pool is idle, the production micro-batching law
 *   (`batchingWindow`, `targetBatchSize`, `decideDispatch`) decides whether to start a
 *   step now or wait; its inputs come from the production estimators (`ArrivalRate`,
 *   `ServiceCurve` fitted on the simulated steps).
 * - A step runs its batch through every MoE layer: each type's rows land on accelerators
 *   by its gate affinity and the plan's replica split (production `backendLoads`), plus
 *   Poisson-like noise; a layer takes the slowest accelerator's `a + b·rows`, overlapped
 *   with (or followed by) two all-to-all hops.
 * - Placement control: static, EPLB greedy every N minutes, SGLang-style every K steps
 *   (synchronous), or Switchyard's balancer as the router runs it: load rounds every
 *   second feed an EWMA over `detect_window`, and every `evaluate_interval` the production
 *   evaluation step (`evaluateBalance`: trigger hysteresis, `decideRebalance`,
 *   `adjust_interval` hold unless the gain is `switch_gain`) decides — with or without
 *   the pre-warm job (`PrewarmJob`, whose predicted load the balancer's ticks also plan on
 *   while a pre-warm is in force, as in the router). Switches stage
 *   weights in the background and activate after the transfer; what does not fit in
 *   memory is loaded at activation, on the critical path (cold starts).
 * Time: the day is compressed `C×`; traffic patterns and every control period (adjust
 * interval, window, EPLB period, pre-warm cadence, horizon, lead time) are divided by `C`;
 * device, network and weight-transfer times are not.
 */
import { ArrivalRate, ServiceCurve } from "../../gpu-backend/batching/estimators.ts";
import {
  type BatchBounds,
  batchingWindow,
  decideDispatch,
  targetBatchSize,
} from "../../gpu-backend/batching/control_law.ts";
import { greedyPlacement } from "../../router/control/balancer/eplb_greedy.ts";
import {
  backendLoads,
  planFromPlacement,
  predictedBalance,
  replicasMoved,
  slotsPerBackend,
} from "../../router/control/balancer/plan_math.ts";
import { type ModelShape, proposePlacement } from "../../router/control/balancer/rebalancer.ts";
import {
  evaluateBalance,
  INITIAL_TRIGGER,
} from "../../router/control/balancer/evaluate_balance.ts";
import type { BackendView } from "../../router/serve/pool/backend_view.ts";
import { PrewarmJob } from "../../router/control/prewarm/prewarm_job.ts";
import { parsePartKey } from "../../shared/model_manifest.ts";
import type { PrewarmDeps, PrewarmEvent } from "../../router/control/prewarm/prewarm_types.ts";
import { createPolicy, type PolicyName } from "../../router/serve/entry/create_policy.ts";
import { silentLogger } from "../../shared/logger.ts";
import { type PlacementPlan, type PlanBackend, staticPlan } from "../../shared/placement_plan.ts";
import { createGaussian, createRandom, deriveSeed } from "../model/prng.ts";
import { hopMs, networkShape, serviceMs } from "./devices.ts";
import { EventQueue } from "./event_queue.ts";
import type { DeviceParams } from "./params.ts";
import { Residency } from "./residency.ts";
import {
  type AffinityTable,
  type DayScenario,
  mixAt,
  type ModelShapeSim,
  rateAt,
} from "./workload.ts";

/** Placement strategies compared. */
export type PlacementPolicy =
  | "static"
  | "eplb"
  | "sglang"
  | "switchyard"
  | "switchyard-prewarm"
  | "switchyard-tuned"
  | "oracle";

/**
 * The placement strategies `--policy all` runs, in report order (`switchyard-tuned`, a
 * labelled non-default variant, only when named).
 */
export const PLACEMENT_POLICIES: readonly PlacementPolicy[] = [
  "static",
  "eplb",
  "sglang",
  "switchyard",
  "switchyard-prewarm",
];

/** The balancer knobs (day-time ms for periods). */
export interface BalancerKnobs {
  threshold: number;
  /** At most one switch per interval unless the worst layer gains `switchGain`. */
  adjustIntervalMs: number;
  /** Long load window (pre-warm's observed mix and utilisation). */
  windowMs: number;
  redundancy: number;
  /** Cadence of the balancer's evaluations (`expert_balancer.evaluate_interval`). */
  evaluateIntervalMs: number;
  /** EWMA time constant of the load the balancer detects and plans on (`detect_window`). */
  detectWindowMs: number;
  /** `expert_balancer.switch_gain`. */
  switchGain: number;
  /** Cadence of the router's load rounds that feed the detection window (production: 1 s). */
  loadRoundMs: number;
}

/** One balancer evaluation, as `--trace` writes it. */
export interface EvaluationTrace {
  /** Day-hour of the evaluation. */
  hour: number;
  /** The current plan's predicted worst layer on the detection window's load. */
  worst: number | null;
  armed: boolean;
  outcome: EvaluationOutcome;
  /** Predicted worst layer after the planned switch, when planned. */
  after: number | null;
}

/** What one evaluation did (counted per run; see `EvaluationTrace`). */
export type EvaluationOutcome =
  | "staging"
  | "no load"
  | "balanced"
  | "confirming"
  | "no better plan"
  | "held"
  | "switch"
  | "switch (gain ≥ switch_gain)";

/** The pre-warm knobs (day-time ms). */
export interface PrewarmKnobs {
  horizonMs: number;
  threshold: number;
  leadTimeMs: number;
  maxBackends: number;
  /** Cadence of the job (production: every minute). */
  everyMs: number;
}

/** One simulated request given explicitly (tests). */
export interface FixedArrival {
  at: number;
  rows: number;
  type: number;
}

/** Everything one run needs. */
export interface SimOptions {
  seed: number;
  devices: number;
  shape: ModelShapeSim;
  device: DeviceParams;
  /** Expert weights an accelerator can hold (overrides `device.memoryExperts`). */
  memoryExperts?: number;
  types: readonly string[];
  affinity: AffinityTable;
  scenario: DayScenario;
  policy: PlacementPolicy;
  /** Virtual seconds the day lasts. */
  dayS: number;
  /** Requests/s at the diurnal peak (before event multipliers). */
  peakRatePerS: number;
  rowsMin: number;
  rowsMax: number;
  sloMs: number;
  queueLimit: number;
  batching: BatchBounds;
  routing: PolicyName;
  balancer: BalancerKnobs;
  prewarm: PrewarmKnobs;
  /** EPLB re-placement period (day-time ms). */
  eplbEveryMs: number;
  /** SGLang-style rebalancing period, steps. */
  sglangEverySteps: number;
  /** Overlap all-to-all with compute (dual micro-batch); else add them. */
  overlap: boolean;
  /** Per-accelerator row noise (sqrt of rows); off for hand-computable tests. */
  noise: boolean;
  /** Explicit arrivals instead of the scenario's process (tests). */
  arrivals?: readonly FixedArrival[];
  /** Virtual seconds at the start left out of `measuredRowsPerS` and `measuredBalancedness`. */
  warmupS?: number;
  /**
   * Factor on the sampling deviation of the request-type mix in the balancer's load rounds
   * (default 1: as sampled). A compressed day's detection window holds C× fewer requests
   * than the same window of a real day at the same rate; `1/√C` gives it a real window's
   * sampling noise.
   */
  detectSampling?: number;
  /**
   * Factor on the sampling deviation of each step's request-type mix in the "real-minute"
   * balancedness measure (default 1): a compressed day's sample (a day-minute) holds C×
   * fewer requests than a real day-minute at that rate; `1/√C` gives it a real minute's
   * sampling noise (the per-accelerator row noise is scaled alike). The served rows, and so
   * every latency, are not changed.
   */
  measureSampling?: number;
  /** Keep every balancer evaluation in `SimResult.trace` (analysis; off by default). */
  trace?: boolean;
}

/** What one run measured. */
export interface SimResult {
  policy: PlacementPolicy;
  /** Report label when it is not the policy's name (a tuned variant). */
  label?: string;
  arrived: number;
  completed: number;
  shed: number;
  /** Requests finished within the SLO, per virtual second of the day. */
  goodputPerS: number;
  /** Rows served per virtual second. */
  rowsPerS: number;
  /** Rows served per virtual second after the warm-up. */
  measuredRowsPerS: number;
  /** Mean over layers of mean ÷ max expert rows per accelerator, summed after the warm-up. */
  measuredBalancedness: number;
  p50Ms: number;
  p99Ms: number;
  meanWaitMs: number;
  /**
   * Per sample (a day-minute, at least 250 virtual ms): mean over layers of mean/max
   * accelerator rows; null when idle.
   */
  balancedness: (number | null)[];
  /** Share of samples with balancedness ≥ 0.95, outside the first adjust interval after a shift. */
  shareAbove95: number;
  /** Mean of the non-null samples. */
  meanBalancedness: number;
  /** The same two with a real day-minute's sampling noise (`SimOptions.measureSampling`). */
  realMinute: { shareAbove95: number; meanBalancedness: number };
  event: EventMeasure | null;
  switches: number;
  coldStarts: number;
  bytesMoved: number;
  /** Wall-clock ms of each re-plan (not deterministic; reported only with --timings). */
  plannerMs: number[];
  steps: number;
  /** Per day-hour: goodput/s, mean balancedness, p99 (for the CSV). */
  hourly: { hour: number; goodputPerS: number; balancedness: number | null; p99Ms: number }[];
  /** Balancer evaluations by outcome (Switchyard policies; empty otherwise). */
  evaluations: Partial<Record<EvaluationOutcome, number>>;
  /** Every evaluation, when `SimOptions.trace`. */
  trace: EvaluationTrace[];
  /** Pre-warm job runs by `trigger: plan action` (or outcome); empty without the job. */
  prewarmRuns: Record<string, number>;
}

/** Measures inside the first scheduled-or-not event of the scenario with a multiplier > 1. */
export interface EventMeasure {
  name: string;
  goodputPerS: number;
  p99Ms: number;
  /** p99 of requests arriving in the event's first day-minute (at least 250 virtual ms). */
  firstMinuteP99Ms: number;
  coldStarts: number;
}

type Ev =
  | { kind: "arrival" }
  | { kind: "stepEnd" }
  | { kind: "wake" }
  | { kind: "tick" }
  | { kind: "round" }
  | { kind: "eplb" }
  | { kind: "prewarm" }
  | { kind: "activate"; plan: PlacementPlan; coldLoads: number; stallMs: number }
  | { kind: "sample" };

interface Request {
  at: number;
  rows: number;
  type: number;
  entry: number;
}

const DAY_MS = 86_400_000;

/** Runs one simulated day; resolves with its measures. */
export async function simulate(o: SimOptions): Promise<SimResult> {
  const D = o.devices;
  const { layers: L, experts: E, topK } = o.shape;
  const T = o.types.length;
  const epochs = o.affinity[0]!.length;
  const dayMs = o.dayS * 1000;
  const C = DAY_MS / dayMs; // compression
  const hourOf = (t: number) => (t * C) / 3_600_000;
  const random = createRandom(deriveSeed(o.seed, 1));
  const gaussian = createGaussian(createRandom(deriveSeed(o.seed, 2)));
  const routeRandom = createRandom(deriveSeed(o.seed, 3));
  const events = new EventQueue<Ev>();
  const a = o.device.fixedMs.value;
  const b = o.device.perRowMs.value;
  const net = networkShape(D, o.device);
  const rowBytes = o.device.rowBytes.value;

  // Pool, plan, memory.
  const backends: PlanBackend[] = Array.from({ length: D }, (_, i) => ({
    id: `acc-${i}`,
    url: `sim://acc-${i}`,
  }));
  const model: ModelShape = { name: "sim", layers: L, experts: E, groups: o.shape.groups };
  const perBackend = slotsPerBackend(E, D, o.balancer.redundancy);
  let version = 1;
  let plan: PlacementPlan = staticPlan({
    model: model.name,
    layers: L,
    experts: E,
    backends,
    slotsPerBackend: perBackend,
    now: 0,
  });
  const residency = new Residency({
    devices: D,
    experts: E,
    capacity: o.memoryExperts ?? o.device.memoryExperts.value,
    expertBytes: o.device.expertBytes.value,
    loadBytesPerMs: o.device.weightLoadBytesPerMs.value,
  });
  residency.install(plan);
  let pending = false;
  let stallMs = 0;
  let switches = 0;
  let coldStarts = 0;
  let bytesMoved = 0;
  const plannerMs: number[] = [];
  let shares = new Map<number, Float64Array>();

  /** `[L·D]` expert rows per token of type t in epoch k on each accelerator under the plan. */
  const sharesOf = (t: number, k: number): Float64Array => {
    const key = t * epochs + k;
    let s = shares.get(key);
    if (s === undefined) {
      s = Float64Array.from(backendLoads(plan, o.affinity[t]![k]!).flat());
      shares.set(key, s);
    }
    return s;
  };
  const setPlan = (next: PlacementPlan) => {
    plan = next;
    shares = new Map();
  };
  const epochAt = (t: number): [number, number] => {
    const pos = Math.min(Math.max(hourOf(t) / 24, 0), 1) * (epochs - 1);
    const k = Math.min(Math.floor(pos), epochs - 1);
    return [k, pos - k];
  };

  // Observed load: rows by (type, epoch) per step, in a sliding window and since the
  // last periodic re-placement.
  const log: { at: number; weights: Float64Array }[] = [];
  let sinceLast = new Float64Array(T * epochs);
  let sinceLastAt = 0;
  const loadsOf = (weights: Float64Array, seconds: number): number[][] => {
    const loads = Array.from({ length: L }, () => new Array<number>(E).fill(0));
    weights.forEach((w, i) => {
      if (w <= 0) return;
      const table = o.affinity[Math.floor(i / epochs)]![i % epochs]!;
      for (let l = 0; l < L; l++) {
        const row = table[l]!;
        const out = loads[l]!;
        for (let e = 0; e < E; e++) out[e]! += (w * row[e]!) / seconds;
      }
    });
    return loads;
  };
  let logHead = 0;
  const trimLog = (now: number) => {
    const windowMs = o.balancer.windowMs / C;
    while (logHead < log.length && log[logHead]!.at < now - windowMs) logHead++;
    if (logHead > 4096 && logHead * 2 > log.length) {
      log.splice(0, logHead);
      logHead = 0;
    }
  };
  // The balancer's detection window, as the router keeps it (ShortWindowLoad): an EWMA
  // with time constant detect_window of each load round's rates. Kept on the (type, epoch)
  // row weights: loads are linear in them, so the EWMA of the loads is the loads of this.
  const detected = new Float64Array(T * epochs);
  let sinceRound = new Float64Array(T * epochs);
  let lastRoundAt: number | null = null;
  const shrink = o.detectSampling ?? 1;
  const loadRound = (now: number) => {
    const seconds = (now - (lastRoundAt ?? 0)) / 1000;
    // The round's type mix, its sampling deviation from the scenario's mix scaled by
    // `detectSampling` (see SimOptions).
    if (shrink !== 1) {
      const rows = sinceRound.reduce((x, y) => x + y, 0);
      const mix = mixAt(o.scenario, hourOf(now));
      const [k, f] = epochAt(now);
      const expected = new Float64Array(T * epochs);
      o.types.forEach((type, t) => {
        const share = mix[type] ?? 0;
        expected[t * epochs + k]! += rows * share * (1 - f);
        if (k + 1 < epochs) expected[t * epochs + k + 1]! += rows * share * f;
      });
      sinceRound = sinceRound.map((w, i) => expected[i]! + (w - expected[i]!) * shrink);
    }
    if (lastRoundAt === null) {
      sinceRound.forEach((w, i) => detected[i] = w / Math.max(seconds, 1e-9));
    } else {
      const alpha = 1 - Math.exp(-(now - lastRoundAt) / (o.balancer.detectWindowMs / C));
      sinceRound.forEach((w, i) => detected[i]! += alpha * (w / seconds - detected[i]!));
    }
    // Weights decayed below 1e-6 of the total are dropped (they never reach 0 on their own):
    // loads cost L·E per non-zero weight, evaluated every evaluate_interval.
    const total = detected.reduce((x, y) => x + y, 0);
    detected.forEach((w, i) => {
      if (w < 1e-6 * total) detected[i] = 0;
    });
    lastRoundAt = now;
    sinceRound = new Float64Array(T * epochs);
  };
  let trigger = INITIAL_TRIGGER;
  /** Day-time ms of the last (non-initial) switch's activation. */
  let lastSwitchAt: number | null = null;
  const evaluations: Partial<Record<EvaluationOutcome, number>> = {};
  const trace: EvaluationTrace[] = [];
  const prewarmRuns: Record<string, number> = {};

  const newVersion = (unversioned: Omit<PlacementPlan, "version" | "createdAt">, now: number) => ({
    ...unversioned,
    version: ++version,
    createdAt: now,
  });
  /** Stages `next`: background loads now, activation (and overflow loads) after them. */
  const stage = (next: PlacementPlan, now: number, synchronous: boolean) => {
    const cost = residency.cost(plan, next, synchronous);
    bytesMoved += cost.bytes;
    switches++;
    const coldLoads = cost.overflow.reduce((x, y) => x + y, 0);
    if (synchronous) {
      residency.activate(next);
      setPlan(next);
      coldStarts += coldLoads;
      stallMs += cost.activationMs;
      return;
    }
    pending = true;
    events.push(now + cost.backgroundMs, {
      kind: "activate",
      plan: next,
      coldLoads,
      stallMs: cost.activationMs,
    });
  };
  const greedyPlan = (loads: number[][], now: number): PlacementPlan => {
    const nodes = Math.max(1, Math.floor(D / net.devicesPerNode));
    const hierarchical = D % net.devicesPerNode === 0 && o.shape.groups % nodes === 0;
    const started = performance.now();
    const placement = greedyPlacement({
      weight: loads,
      num_replicas: D * perBackend,
      num_groups: o.shape.groups,
      num_nodes: hierarchical ? nodes : 1,
      num_gpus: D,
    });
    plannerMs.push(performance.now() - started);
    return planFromPlacement(placement, {
      model: model.name,
      version: ++version,
      backends,
      reason: "eplb",
      now,
    });
  };

  // Entry routing through the production policy.
  const views = backends.map((backend) => ({
    id: backend.id,
    name: backend.id,
    url: backend.url,
    healthy: true,
    inFlight: 0,
    models: [model.name],
    details: undefined,
    checkedAt: 0,
    lastError: undefined,
  }));
  const routing = createPolicy(o.routing, { random: routeRandom });
  const indexOf = new Map(views.map((v, i) => [v as BackendView, i]));

  // Batching: production estimators and control law.
  const rate = new ArrivalRate();
  const meanRowsPrior = (o.rowsMin + o.rowsMax) / 2;
  let meanRows = meanRowsPrior;
  const curve = new ServiceCurve({
    fixedMs: L * (a + net.latencyMs),
    perRowMs: (L * b * topK) / D,
  });
  const queue: Request[] = [];
  let head = 0;
  let queuedRows = 0;
  /** EWMA of step ms per row served: the admission's wait estimate. */
  let msPerRow = curve.predict(o.batching.max * meanRowsPrior) / (o.batching.max * meanRowsPrior);
  let busy = false;
  let wakeAt = Infinity;

  // Measures.
  // A balancedness sample spans one day-minute, and at least 250 virtual ms (many steps).
  const sampleMs = Math.max(60_000 / C, 250);
  const samples = Math.ceil(dayMs / sampleMs);
  const balancedness: (number | null)[] = [];
  const acc = new Float64Array(L * D);
  const accReal = new Float64Array(L * D);
  const balancednessReal: (number | null)[] = [];
  const measureShrink = o.measureSampling ?? 1;
  const warmupMs = (o.warmupS ?? 0) * 1000;
  const accMeasured = new Float64Array(L * D);
  let rowsMeasured = 0;
  const latencies: number[] = [];
  const arrivals: number[] = [];
  let arrived = 0;
  let shed = 0;
  let waitSum = 0;
  let rowsServed = 0;
  let steps = 0;
  let stepsSinceSglang = 0;
  let busyMsInWindow = 0;
  const eventDef = o.scenario.events.find((e) => e.multiplier > 1) ?? null;
  let eventColdStarts = 0;
  const inEvent = (t: number) =>
    eventDef !== null && hourOf(t) >= eventDef.startH && hourOf(t) < eventDef.endH;

  // Arrival process.
  const maxMultiplier = Math.max(1, ...o.scenario.events.map((e) => e.multiplier));
  const lambdaMax = (o.peakRatePerS * maxMultiplier) / 1000;
  const fixed = o.arrivals;
  let fixedIndex = 0;
  const nextArrival = (now: number): number | null => {
    if (fixed !== undefined) return fixed[fixedIndex]?.at ?? null;
    let t = now;
    for (;;) {
      t += -Math.log(1 - random()) / lambdaMax;
      if (t >= dayMs) return null;
      if (random() * maxMultiplier <= rateAt(o.scenario, hourOf(t))) return t;
    }
  };
  let mixMinute = -1;
  let mixShares: number[] = [];
  /** The scenario's type shares at `now`, by day-minute (what arrivals are drawn from). */
  const sharesAt = (now: number): number[] => {
    const minute = Math.floor(hourOf(now) * 60);
    if (minute !== mixMinute) {
      const mix = mixAt(o.scenario, minute / 60);
      mixShares = o.types.map((type) => mix[type] ?? 0);
      mixMinute = minute;
    }
    return mixShares;
  };
  const drawRequest = (now: number): Omit<Request, "entry"> => {
    if (fixed !== undefined) {
      const f = fixed[fixedIndex++]!;
      return { at: now, rows: f.rows, type: f.type };
    }
    sharesAt(now);
    let u = random();
    let type = 0;
    for (let t = 0; t < T; t++) {
      const share = mixShares[t]!;
      if (share <= 0) continue;
      type = t;
      if (u < share) break;
      u -= share;
    }
    const rows = o.rowsMin + Math.floor(random() * (o.rowsMax - o.rowsMin + 1));
    return { at: now, rows, type };
  };

  const tryDispatch = (now: number) => {
    if (busy || head >= queue.length) return;
    const waiting = queue.length - head;
    const lambda = rate.perMs(now);
    const load = [{ arrivalPerMs: lambda, meanRows, serviceMs: (n: number) => curve.predict(n) }];
    const windowMs = batchingWindow(load, { slots: 1, hostMsPerExecution: 0 }, o.batching);
    const target = targetBatchSize(lambda, windowMs, o.batching);
    const decision = decideDispatch(
      { groups: waiting, headWaitMs: now - queue[head]!.at },
      target,
      windowMs,
    );
    if (decision.dispatch) {
      startStep(now);
    } else if (Number.isFinite(decision.waitMs) && now + decision.waitMs < wakeAt) {
      wakeAt = now + decision.waitMs;
      events.push(wakeAt, { kind: "wake" });
    }
  };

  let inStep: Request[] = [];
  const rowsLD = new Float64Array(L * D);
  const rowsRealLD = new Float64Array(L * D);
  const entryRows = new Float64Array(D);
  const startStep = (now: number) => {
    const n = Math.min(queue.length - head, o.batching.max);
    inStep = queue.slice(head, head + n);
    head += n;
    if (head > 4096 && head * 2 > queue.length) {
      queue.splice(0, head);
      head = 0;
    }
    busy = true;
    // Rows by (type, epoch).
    const [k, f] = epochAt(now);
    const weights = new Float64Array(T * epochs);
    entryRows.fill(0);
    let totalRows = 0;
    for (const r of inStep) {
      weights[r.type * epochs + k]! += r.rows * (1 - f);
      if (k + 1 < epochs) weights[r.type * epochs + k + 1]! += r.rows * f;
      entryRows[r.entry]! += r.rows;
      totalRows += r.rows;
      waitSum += now - r.at;
    }
    log.push({ at: now, weights });
    trimLog(now);
    weights.forEach((w, i) => {
      sinceLast[i]! += w;
    });
    rowsLD.fill(0);
    weights.forEach((w, i) => {
      if (w <= 0) return;
      const s = sharesOf(Math.floor(i / epochs), i % epochs);
      for (let j = 0; j < s.length; j++) rowsLD[j]! += w * s[j]!;
    });
    // The real-minute measure: the step's type mix pulled towards the scenario's by
    // `measureSampling` (see SimOptions); only measured, never served.
    const real = measureShrink !== 1 && totalRows > 0;
    if (real) {
      const mix = sharesAt(now);
      rowsRealLD.fill(0);
      weights.forEach((w, i) => {
        const t = Math.floor(i / epochs);
        const epoch = i % epochs;
        const part = epoch === k ? 1 - f : epoch === k + 1 ? f : 0;
        const expected = totalRows * mix[t]! * part;
        const pulled = expected + (w - expected) * measureShrink;
        if (pulled <= 0) return;
        const s = sharesOf(t, epoch);
        for (let j = 0; j < s.length; j++) rowsRealLD[j]! += pulled * s[j]!;
      });
    }
    let maxEntry = 0;
    for (const r of entryRows) maxEntry = Math.max(maxEntry, r);
    let stepMs = stallMs;
    stallMs = 0;
    for (let l = 0; l < L; l++) {
      let slowest = 0;
      let maxRows = 0;
      for (let d = 0; d < D; d++) {
        let rows = rowsLD[l * D + d]!;
        let measured = real ? rowsRealLD[l * D + d]! : rows;
        if (o.noise && rows > 0) {
          const g = gaussian();
          rows = Math.max(0, rows + Math.sqrt(rows) * g);
          measured = real ? Math.max(0, measured + Math.sqrt(measured) * g * measureShrink) : rows;
        }
        acc[l * D + d]! += rows;
        accReal[l * D + d]! += measured;
        if (now >= warmupMs) accMeasured[l * D + d]! += rows;
        maxRows = Math.max(maxRows, rows);
        slowest = Math.max(slowest, serviceMs(a, b, rows));
      }
      // Dispatch + combine round trip: the busiest sender (entry rows × top-k) or receiver.
      const hop = hopMs(net, Math.max(maxEntry * topK, maxRows) * rowBytes);
      stepMs += o.overlap ? Math.max(slowest, hop) : slowest + hop;
    }
    curve.observe(totalRows, stepMs);
    queuedRows -= totalRows;
    if (totalRows > 0) msPerRow += 0.1 * (stepMs / totalRows - msPerRow);
    rowsServed += totalRows;
    if (now >= warmupMs) rowsMeasured += totalRows;
    busyMsInWindow += stepMs;
    steps++;
    stepsSinceSglang++;
    events.push(now + stepMs, { kind: "stepEnd" });
  };

  // Pre-warm ports over the simulated pool (the job itself is production code).
  const scheduledEvents: PrewarmEvent[] = o.scenario.events.filter((e) => e.scheduled).map((e) => ({
    name: e.name,
    start: e.startH * 3_600_000,
    end: e.endH * 3_600_000,
    multiplier: e.multiplier,
    mix: e.mix,
  }));
  let virtualNow = 0;
  const observedMix = (): Record<string, number> => {
    const mix: Record<string, number> = {};
    for (let j = logHead; j < log.length; j++) {
      log[j]!.weights.forEach((w, i) => {
        const type = o.types[Math.floor(i / epochs)]!;
        mix[type] = (mix[type] ?? 0) + w;
      });
    }
    return mix;
  };
  const prewarmDeps: PrewarmDeps = {
    settings: {
      enabled: true,
      horizon: o.prewarm.horizonMs,
      threshold: o.prewarm.threshold,
      lead_time: o.prewarm.leadTimeMs,
      max_backends: o.prewarm.maxBackends,
    },
    traffic: {
      // Assumed: a perfect seasonal forecast of the diurnal curve (events excluded).
      forecastVolume: (now, horizon) => {
        const points = [];
        for (let at = now + horizon / 4; at <= now + horizon; at += horizon / 4) {
          const h = at / 3_600_000;
          const base = o.scenario.diurnal
            ? 0.75 - 0.25 * Math.cos((2 * Math.PI * (h - 3)) / 24)
            : 1;
          points.push({ at, tokensPerS: base * o.peakRatePerS * meanRowsPrior });
        }
        return Promise.resolve({ points, model: "seasonal (assumed perfect)" });
      },
      observedMix: () => Promise.resolve(observedMix()),
      affinity: () => {
        const [k] = epochAt(virtualNow);
        return Promise.resolve(
          Object.fromEntries(o.types.map((type, t) => [type, o.affinity[t]![k]!])),
        );
      },
    },
    events: { upcoming: (now) => Promise.resolve(scheduledEvents.filter((e) => e.end > now)) },
    balancer: {
      modelShape: () => model,
      preview: (weight) => {
        const proposed: PlacementPlan = {
          ...proposePlacement(weight, {
            model,
            backends,
            redundancy: o.balancer.redundancy,
            reason: "preview",
          }),
          version: 0,
          createdAt: virtualNow,
        };
        return Promise.resolve({
          model: model.name,
          current: { version: plan.version, balancedness: predictedBalance(plan, weight).pool },
          proposed: {
            phy2log: proposed.layers.map((layer) => layer.phy2log),
            slotsPerBackend: proposed.slotsPerBackend,
            balancedness: predictedBalance(proposed, weight).pool,
          },
          moved: replicasMoved(plan, proposed),
        });
      },
      apply: ({ phy2log }) => {
        const next = planFromPlacement({ phy2log }, {
          model: model.name,
          version: ++version,
          backends,
          reason: "prewarm",
          now: virtualNow,
        });
        if (pending) return Promise.reject(new Error("a switch is staging"));
        const moved = replicasMoved(plan, next);
        const previous = plan.version;
        // `stage` schedules in simulator time; `virtualNow` is the uncompressed day clock.
        stage(next, virtualNow / C, false);
        return Promise.resolve({
          version: next.version,
          previous,
          reason: "prewarm",
          moved,
          predicted: { before: null, after: null },
          pendingActivation: [],
        });
      },
    },
    warmer: {
      // Background loads into free memory (weight traffic counted; their time is not on
      // any critical path, and the lead time is far longer).
      warm: (backend, parts) => {
        const d = backends.findIndex((b) => b.id === backend.id);
        // The job names routed experts only (`neededParts`): "L{layer}/E{expert}".
        const keyOf = new Map(parts.flatMap((part) => {
          const parsed = parsePartKey(part);
          return parsed?.kind === "expert"
            ? [[parsed.layer * E + parsed.expert, part] as const]
            : [];
        }));
        const done = residency.warm(plan, d, [...keyOf.keys()]);
        bytesMoved += done.loaded.length * o.device.expertBytes.value;
        const names = (keys: number[]) => keys.map((key) => keyOf.get(key)!);
        return Promise.resolve({
          backend: backend.id,
          requested: parts,
          warmed: names(done.loaded),
          alreadyWarm: names(done.already),
          evicted: [],
          skipped: names(done.skipped),
        });
      },
    },
    scaler: {
      name: "advisory",
      publish: () => Promise.resolve({ scaler: "advisory", status: "reported" as const }),
    },
    backends: () => backends,
    currentPlan: () => Promise.resolve(plan),
    poolLoad: () => {
      const windowMs = o.balancer.windowMs / C;
      const tokens = log.slice(logHead).reduce(
        (sum, e) => sum + e.weights.reduce((x, y) => x + y, 0),
        0,
      );
      const utilisation = Math.min(1, busyMsInWindow / windowMs);
      return {
        backends: backends.map((backend) => ({
          id: backend.id,
          stale: false,
          utilisation,
          tokensPerS: tokens / (windowMs / 1000) / D,
        })),
      };
    },
    topK: () => topK,
    observedExpertLoad: () => lastRoundAt === null ? null : loadsOf(detected, 1),
    logger: silentLogger,
  };
  // The production job: its runs, and the predicted load it holds for the balancer's ticks
  // while a pre-warm is in force (the router's balancing wiring does the same).
  const prewarmJob = new PrewarmJob(prewarmDeps);

  // Schedule the first events.
  const first = nextArrival(0);
  if (first !== null) events.push(first, { kind: "arrival" });
  events.push(sampleMs, { kind: "sample" });
  if (o.policy === "oracle") events.push(0, { kind: "tick" });
  if (o.policy.startsWith("switchyard")) {
    events.push(o.balancer.loadRoundMs / C, { kind: "round" });
    events.push(o.balancer.evaluateIntervalMs / C, { kind: "tick" });
  }
  if (o.policy === "eplb") events.push(o.eplbEveryMs / C, { kind: "eplb" });
  if (o.policy === "switchyard-prewarm") events.push(o.prewarm.everyMs / C, { kind: "prewarm" });

  for (let next = events.pop(); next !== undefined; next = events.pop()) {
    const now = next.at;
    if (now > dayMs) break;
    virtualNow = now * C;
    const ev = next.event;
    switch (ev.kind) {
      case "arrival": {
        const request = drawRequest(now);
        arrived++;
        rate.observe(now);
        meanRows += 0.05 * (request.rows - meanRows);
        // Admission: a bounded queue, and no request whose predicted wait already
        // exceeds the SLO (it could only finish late).
        const waiting = queue.length - head;
        const predictedWaitMs = (queuedRows + request.rows) * msPerRow;
        if (waiting >= o.queueLimit || predictedWaitMs > o.sloMs) {
          shed++;
        } else {
          const view = routing.pick(views);
          const entry = indexOf.get(view)!;
          views[entry]!.inFlight++;
          queue.push({ ...request, entry });
          queuedRows += request.rows;
          // The detection window counts rows as they are admitted: a saturated step carries
          // hundreds of requests, longer than a compressed load round, and counting it at
          // dispatch made the detected load a sawtooth (0 in one round, a burst the next).
          const [k, f] = epochAt(now);
          sinceRound[request.type * epochs + k]! += request.rows * (1 - f);
          if (k + 1 < epochs) sinceRound[request.type * epochs + k + 1]! += request.rows * f;
          tryDispatch(now);
        }
        const t = nextArrival(now);
        if (t !== null) events.push(t, { kind: "arrival" });
        break;
      }
      case "stepEnd": {
        for (const r of inStep) {
          latencies.push(now - r.at);
          arrivals.push(r.at);
          views[r.entry]!.inFlight--;
        }
        inStep = [];
        busy = false;
        if (o.policy === "sglang" && stepsSinceSglang >= o.sglangEverySteps && !pending) {
          const seconds = Math.max((now - sinceLastAt) / 1000, 1e-9);
          stage(greedyPlan(loadsOf(sinceLast, seconds), now), now, true);
          sinceLast = new Float64Array(T * epochs);
          sinceLastAt = now;
          stepsSinceSglang = 0;
        }
        tryDispatch(now);
        break;
      }
      case "wake":
        if (now >= wakeAt) wakeAt = Infinity;
        tryDispatch(now);
        break;
      case "activate":
        residency.activate(ev.plan);
        setPlan(ev.plan);
        lastSwitchAt = virtualNow;
        coldStarts += ev.coldLoads;
        if (inEvent(now)) eventColdStarts += ev.coldLoads;
        stallMs += ev.stallMs;
        pending = false;
        break;
      case "round":
        events.push(now + o.balancer.loadRoundMs / C, { kind: "round" });
        loadRound(now);
        break;
      case "tick": {
        if (o.policy === "oracle") {
          // A ceiling, not a policy: the planner on the scenario's exact expected load at
          // every balancedness sample's start, switched instantly and for free.
          events.push(now + sampleMs, { kind: "tick" });
          const shares = sharesAt(now);
          const [k, f] = epochAt(now);
          const expected = new Float64Array(T * epochs);
          shares.forEach((share, t) => {
            expected[t * epochs + k]! += share * (1 - f);
            if (k + 1 < epochs) expected[t * epochs + k + 1]! += share * f;
          });
          const proposed = proposePlacement(loadsOf(expected, 1), {
            model,
            backends,
            redundancy: o.balancer.redundancy,
            reason: "oracle",
          });
          setPlan(newVersion(proposed, now));
          break;
        }
        // The router's balancer: one evaluation every evaluate_interval; none while a
        // switch stages (its ticks run one at a time with the switch).
        events.push(now + o.balancer.evaluateIntervalMs / C, { kind: "tick" });
        let outcome: EvaluationOutcome = "staging";
        let worst: number | null = null;
        let after: number | null = null;
        if (!pending) {
          const started = performance.now();
          const evaluation = evaluateBalance({
            settings: {
              enabled: true,
              strategy: "dynamic",
              threshold: o.balancer.threshold,
              adjust_interval: o.balancer.adjustIntervalMs,
              switch_gain: o.balancer.switchGain,
              redundancy: o.balancer.redundancy,
            },
            trigger,
            now: virtualNow,
            lastSwitchAt,
            model,
            backends,
            current: plan,
            pinned: null,
            loads: prewarmJob.blendLoad(
              model.name,
              lastRoundAt === null ? null : loadsOf(detected, 1),
              virtualNow,
            ),
          });
          trigger = evaluation.trigger;
          worst = evaluation.worst;
          const { decision } = evaluation;
          after = decision.predicted.after;
          const held = lastSwitchAt !== null &&
            virtualNow - lastSwitchAt < o.balancer.adjustIntervalMs;
          outcome = decision.action !== "none"
            ? held ? "switch (gain ≥ switch_gain)" : "switch"
            : worst === null
            ? "no load"
            : !trigger.armed
            ? worst >= o.balancer.threshold ? "balanced" : "confirming"
            : decision.reason.startsWith("held")
            ? "held"
            : "no better plan";
          if (decision.action !== "none" && decision.plan !== undefined) {
            plannerMs.push(performance.now() - started);
            stage(newVersion(decision.plan, now), now, false);
          }
        }
        evaluations[outcome] = (evaluations[outcome] ?? 0) + 1;
        if (o.trace) {
          trace.push({ hour: hourOf(now), worst, armed: trigger.armed, outcome, after });
        }
        break;
      }
      case "eplb": {
        events.push(now + o.eplbEveryMs / C, { kind: "eplb" });
        if (pending) break;
        const seconds = Math.max((now - sinceLastAt) / 1000, 1e-9);
        const loads = loadsOf(sinceLast, seconds);
        sinceLast = new Float64Array(T * epochs);
        sinceLastAt = now;
        if (loads.some((row) => row.some((v) => v > 0))) stage(greedyPlan(loads, now), now, false);
        break;
      }
      case "prewarm":
        events.push(now + o.prewarm.everyMs / C, { kind: "prewarm" });
        {
          const d = await prewarmJob.run(virtualNow);
          const key = `${d.trigger}: ${d.plan?.action ?? d.outcome}`;
          prewarmRuns[key] = (prewarmRuns[key] ?? 0) + 1;
        }
        break;
      case "sample": {
        balancedness.push(meanLayerBalance(acc, L, D));
        acc.fill(0);
        balancednessReal.push(meanLayerBalance(accReal, L, D));
        accReal.fill(0);
        busyMsInWindow *= Math.exp(-sampleMs / (o.balancer.windowMs / C));
        if (balancedness.length < samples) events.push(now + sampleMs, { kind: "sample" });
        break;
      }
    }
  }

  const measuredBalancedness = meanLayerBalance(accMeasured, L, D);
  return summarise({
    o,
    measuredRowsPerS: rowsMeasured / Math.max(o.dayS - warmupMs / 1000, 1e-9),
    measuredBalancedness,
    hourOf,
    sampleMs,
    latencies,
    arrivals,
    balancedness,
    balancednessReal,
    arrived,
    shed,
    waitSum,
    rowsServed,
    steps,
    switches,
    coldStarts,
    bytesMoved,
    plannerMs,
    eventColdStarts,
    C,
    evaluations,
    trace,
    prewarmRuns,
  });
}

/** Mean over loaded layers of mean ÷ max of `[L·D]` rows; null when nothing is loaded. */
function meanLayerBalance(rows: Float64Array, L: number, D: number): number | null {
  let sum = 0;
  let layersSeen = 0;
  for (let l = 0; l < L; l++) {
    let max = 0;
    let total = 0;
    for (let d = 0; d < D; d++) {
      const v = rows[l * D + d]!;
      max = Math.max(max, v);
      total += v;
    }
    if (max > 0) {
      sum += total / D / max;
      layersSeen++;
    }
  }
  return layersSeen > 0 ? sum / layersSeen : null;
}

function summarise(s: {
  o: SimOptions;
  measuredRowsPerS: number;
  measuredBalancedness: number | null;
  hourOf: (t: number) => number;
  sampleMs: number;
  latencies: number[];
  arrivals: number[];
  balancedness: (number | null)[];
  balancednessReal: (number | null)[];
  arrived: number;
  shed: number;
  waitSum: number;
  rowsServed: number;
  steps: number;
  switches: number;
  coldStarts: number;
  bytesMoved: number;
  plannerMs: number[];
  eventColdStarts: number;
  C: number;
  evaluations: SimResult["evaluations"];
  trace: EvaluationTrace[];
  prewarmRuns: SimResult["prewarmRuns"];
}): SimResult {
  const { o } = s;
  const daySeconds = o.dayS;
  const good = s.latencies.filter((ms) => ms <= o.sloMs).length;
  const sorted = Float64Array.from(s.latencies).sort();
  // Shift boundaries (day-hours) and the samples right after them.
  const shifts = [
    ...o.scenario.phases.map((p) => p.startH).filter((h) => h > 0),
    ...o.scenario.events.flatMap((e) => [e.startH, e.endH]),
  ];
  const excludeH = o.balancer.adjustIntervalMs / 3_600_000;
  const measure = (samples: readonly (number | null)[]) => {
    let counted = 0;
    let above = 0;
    samples.forEach((value, i) => {
      if (value === null) return;
      const h = s.hourOf(i * s.sampleMs);
      if (shifts.some((start) => h >= start && h < start + excludeH)) return;
      counted++;
      if (value >= 0.95) above++;
    });
    const present = samples.filter((v): v is number => v !== null);
    return {
      shareAbove95: counted > 0 ? above / counted : 0,
      meanBalancedness: present.length > 0
        ? present.reduce((x, y) => x + y, 0) / present.length
        : 0,
    };
  };
  const raw = measure(s.balancedness);
  const ev = o.scenario.events.find((e) => e.multiplier > 1) ?? null;
  let event: EventMeasure | null = null;
  if (ev !== null) {
    const inside = (h: number) => h >= ev.startH && h < ev.endH;
    const firstSpanH = Math.max(1 / 60, (0.25 * s.C) / 3600); // ≥ 250 virtual ms
    const firstMinute = (h: number) => h >= ev.startH && h < ev.startH + firstSpanH;
    const lat = s.latencies.filter((_, i) => inside(s.hourOf(s.arrivals[i]!)));
    const first = s.latencies.filter((_, i) => firstMinute(s.hourOf(s.arrivals[i]!)));
    const seconds = ((ev.endH - ev.startH) * 3600) / s.C;
    event = {
      name: ev.name,
      goodputPerS: lat.filter((ms) => ms <= o.sloMs).length / seconds,
      p99Ms: percentile(Float64Array.from(lat).sort(), 0.99),
      firstMinuteP99Ms: percentile(Float64Array.from(first).sort(), 0.99),
      coldStarts: s.eventColdStarts,
    };
  }
  const hourly = Array.from({ length: 24 }, (_, hour) => {
    const lat = s.latencies.filter((_, i) => Math.floor(s.hourOf(s.arrivals[i]!)) === hour);
    const bal = s.balancedness.filter((v, i) =>
      v !== null && Math.floor(s.hourOf(i * s.sampleMs)) === hour
    ) as number[];
    return {
      hour,
      goodputPerS: lat.filter((ms) => ms <= o.sloMs).length / (3600 / s.C),
      balancedness: bal.length > 0 ? bal.reduce((x, y) => x + y, 0) / bal.length : null,
      p99Ms: percentile(Float64Array.from(lat).sort(), 0.99),
    };
  });
  return {
    policy: o.policy,
    arrived: s.arrived,
    completed: s.latencies.length,
    shed: s.shed,
    goodputPerS: good / daySeconds,
    rowsPerS: s.rowsServed / daySeconds,
    measuredRowsPerS: s.measuredRowsPerS,
    measuredBalancedness: s.measuredBalancedness ?? 1,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    meanWaitMs: s.latencies.length > 0 ? s.waitSum / s.latencies.length : 0,
    balancedness: s.balancedness,
    ...raw,
    realMinute: measure(s.balancednessReal),
    event,
    switches: s.switches,
    coldStarts: s.coldStarts,
    bytesMoved: s.bytesMoved,
    plannerMs: s.plannerMs,
    steps: s.steps,
    hourly,
    evaluations: s.evaluations,
    trace: s.trace,
    prewarmRuns: s.prewarmRuns,
  };
}

/** The `q` quantile of ascending `sorted` (nearest rank); NaN when empty. */
export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}
