/**
 * @module The ways the pre-warm benchmark provisions capacity around the event, on one stack
 * (`prewarm_stack.ts`) and one workload. Each is ticked once per simulated minute.
 *
 * - `switchyard`: the production pre-warm job (`PrewarmJob`): capacity contracts from the
 *   forecast and the event calendar, lead = the measured cold start, the event's placement
 *   staged for the target pool and activated at the event, scale-down with draining.
 * - `reactive` (B1, as llm-d): the reactive balancer plus a queue-depth autoscaler —
 *   every 15 s, desired = ⌈requests in flight ÷ the in-flight per backend measured at the
 *   pool's normal utilisation⌉, up at once, down after 5 minutes below (an HPA's default
 *   stabilisation); new backends serve as soon as they are ready.
 * - `forecast` (B2, as Dynamo's planner): every 3 minutes the production forecaster
 *   (no calendar) predicts the next interval; desired = ⌈peak ÷ (capacity · threshold)⌉.
 * - `seed` (B3, the seed's practice): the event's size at T − 60 min, back to the floor
 *   after the event and the hold; the balancer reacts to what joins.
 * - `oracle` (O): the production job with the exact future traffic, the exact cold start
 *   (no margin) and no hold: the event's capacity and placement ready at T.
 * - `none`: no scaling (the reference of the hour before).
 *
 * Baselines share {@linkcode DrainingScaler}: they scale through the same launcher and
 * drain before they stop a backend (no request is cut), so they differ only in when.
 */
import { PlanClient } from "../../router/control/balancer/plan_client.ts";
import { placementPort } from "../../router/control/prewarm/create_prewarm.ts";
import { PrewarmJob } from "../../router/control/prewarm/prewarm_job.ts";
import { storeTrafficSource } from "../../router/control/prewarm/prewarm_sources.ts";
import type { PrewarmEvent, TrafficSource } from "../../router/control/prewarm/prewarm_types.ts";
import { systemClock } from "../../router/runtime/clock.ts";
import { MemoryLogger } from "../../shared/logging/memory_logger.ts";
import type { ModelManifest } from "../../shared/model_manifest.ts";
import type { Stack } from "./prewarm_stack.ts";
import { TOKEN } from "./prewarm_stack.ts";
import { MINUTE, type PrewarmScenario } from "./prewarm_workload.ts";

/** The policies, in report order. */
export const POLICIES = ["switchyard", "reactive", "forecast", "seed", "oracle", "none"] as const;
export type PolicyName = (typeof POLICIES)[number];

export const LABELS: Record<PolicyName, string> = {
  switchyard: "Switchyard pre-warm",
  reactive: "B1 reactive (queue depth)",
  forecast: "B2 forecast-only (3 min)",
  seed: "B3 seed practice (T−60 min)",
  oracle: "O oracle",
  none: "no pre-warming",
};

/** What every policy reads. */
export interface PolicyContext {
  stack: Stack;
  scenario: PrewarmScenario;
  manifest: ModelManifest;
  /** Tokens per request. */
  rows: number;
  /** Tokens/s one backend serves (measured in this run). */
  capacityPerBackend: number;
  threshold: number;
  /** Backends before the event (the floor). */
  floor: number;
  /** Backends the event needs at the threshold. */
  eventBackends: number;
  /** The warm-up's measured cold starts (simulated ms): request → ready, + expert load. */
  coldStarts: { url: string; readyMs: number; expertLoadMs: number }[];
  /** In flight per backend at the pool's normal utilisation (B1's target). */
  inFlightTarget: number;
  /** Scale-down hold (simulated ms). */
  holdMs: number;
  log(line: string): void;
}

/** One policy; `tick` runs once per simulated minute. */
export interface Policy {
  readonly name: PolicyName;
  start(): Promise<void>;
  tick(now: number): Promise<void>;
  stop(): Promise<void>;
  /** The production job, for the policies that run it. */
  job?: PrewarmJob;
}

/** Creates policy `name` over `ctx`. */
export function createPolicy(name: PolicyName, ctx: PolicyContext): Policy {
  switch (name) {
    case "switchyard":
      return jobPolicy(name, ctx, { oracle: false });
    case "oracle":
      return jobPolicy(name, ctx, { oracle: true });
    case "reactive":
      return queueDepthPolicy(ctx);
    case "forecast":
      return forecastPolicy(ctx);
    case "seed":
      return seedPolicy(ctx);
    case "none":
      return {
        name,
        start: () => Promise.resolve(),
        tick: () => Promise.resolve(),
        stop: () => Promise.resolve(),
      };
  }
}

/** The declared event as the job reads it. */
function declared(scenario: PrewarmScenario): PrewarmEvent {
  return {
    name: "promo",
    start: scenario.start,
    end: scenario.end,
    multiplier: scenario.multiplier,
    mix: scenario.mixAt(scenario.start),
  };
}

/** The production job, on the stack's compressed clock; `oracle` knows the future. */
function jobPolicy(name: PolicyName, ctx: PolicyContext, options: { oracle: boolean }): Policy {
  const { stack } = ctx;
  const logger = new MemoryLogger();
  const settings = {
    ...stack.config.prewarm,
    enabled: true,
    threshold: ctx.threshold,
    capacity_per_backend: ctx.capacityPerBackend,
    min_backends: ctx.floor,
    // Simulated time: one tracking step per real second at 60× (30 s simulated).
    track_interval: 30_000,
    scale_down_hold: options.oracle ? 0 : ctx.holdMs,
    ...(options.oracle ? { cold_start_percentile: 1, lead_margin: 0 } : {}),
  };
  const forecasts = storeTrafficSource(stack.store, {
    model: () => ctx.manifest.name,
    historyMs: 2 * 86_400_000,
    reselectMs: 86_400_000,
    partialLagMs: 0,
  });
  const traffic: TrafficSource = options.oracle ? oracleTraffic(ctx, forecasts) : forecasts;
  const job = new PrewarmJob({
    settings,
    traffic,
    events: {
      upcoming: (now) => Promise.resolve(now >= ctx.scenario.end ? [] : [declared(ctx.scenario)]),
    },
    balancer: stack.reactive.balancer,
    placement: placementPort(stack.config, {
      balancer: stack.reactive.balancer,
      plans: stack.reactive.store,
      client: new PlanClient({ fetch, clock: systemClock, internalToken: TOKEN }),
      budgets: () => new Map(),
      clock: stack.clock,
      logger,
    }),
    scaler: stack.scaler,
    pool: stack.router.pool,
    currentPlan: (model) => stack.reactive.store.current(model),
    poolLoad: () => stack.router.load.snapshot(),
    topK: () => ctx.manifest.top_k,
    observedExpertLoad: (model) => stack.reactive.observed(model),
    floor: ctx.floor,
    clock: stack.clock,
    logger,
  }, { clock: stack.clock, decisionsKept: 10_000 });
  // The cold starts measured in the warm-up (the same launcher, as many at once as the
  // event asks for): what the router would have measured on earlier scale-ups.
  for (const c of ctx.coldStarts) {
    job.capacity.recordColdStart({
      backend: `warm-up ${c.url}`,
      at: 0,
      readyMs: c.readyMs,
      expertLoadMs: c.expertLoadMs,
    });
  }
  return {
    name,
    job,
    start() {
      job.start();
      return Promise.resolve();
    },
    async tick(now) {
      await job.run(now);
    },
    stop: () => job.stop(),
  };
}

/** The exact future: the scenario's rate × rows, events excluded (the job applies them). */
function oracleTraffic(ctx: PolicyContext, observed: TrafficSource): TrafficSource {
  return {
    ...observed,
    forecastVolume(now, horizonMs) {
      const points = [];
      for (let at = now - (now % MINUTE) + MINUTE; at <= now + horizonMs; at += MINUTE) {
        const t = at - MINUTE / 2;
        const event = t >= ctx.scenario.start && t < ctx.scenario.end ? ctx.scenario.multiplier : 1;
        points.push({ at, tokensPerS: (ctx.scenario.rpsAt(t) / event) * ctx.rows });
      }
      return Promise.resolve({ points, bucketMs: MINUTE, model: "oracle (exact)" });
    },
  };
}

/**
 * Scales the baselines through the launcher: up by asking for more (they join the pool as
 * active members once ready), down by draining the newest backends first and stopping
 * each once the plan no longer places experts on it and its requests have finished.
 */
export class DrainingScaler {
  readonly #ctx: PolicyContext;
  #target: number;
  readonly #draining = new Set<string>();

  constructor(ctx: PolicyContext) {
    this.#ctx = ctx;
    this.#target = ctx.floor;
  }

  /** Asks for `n` backends (never below the floor, nor above the event's size + 2: maxReplicas). */
  async want(n: number): Promise<void> {
    const target = Math.min(this.#ctx.eventBackends + 2, Math.max(this.#ctx.floor, n));
    const { stack } = this.#ctx;
    const serving = stack.router.pool.views().filter((v) => (v.role ?? "active") === "active");
    if (target > this.#target) {
      // Backends draining are taken back first.
      for (const url of [...this.#draining]) {
        if (this.#target >= target) break;
        stack.router.pool.setRole(url, "active");
        this.#draining.delete(url);
        this.#target++;
      }
      if (target > this.#target) {
        await stack.scaler.scale(request(this.#ctx, target, this.#launched(), []));
      }
    } else if (target < this.#target) {
      const scaled = stack.launcher.list().backends.filter((b) => b.scaled && b.state === "ready");
      const newest = scaled.map((b) => b.url).reverse()
        .filter((url) => serving.some((v) => v.url === url) && !this.#draining.has(url))
        .slice(0, this.#target - target);
      for (const url of newest) {
        stack.router.pool.setRole(url, "draining");
        this.#draining.add(url);
      }
    }
    this.#target = target;
  }

  /** Ready backends join; drained ones leave. */
  async tick(): Promise<void> {
    const { stack } = this.#ctx;
    for (const backend of await stack.scaler.ready()) {
      if (!stack.router.pool.urls().includes(backend.url)) {
        stack.router.pool.add(backend.url, { role: "active" });
      }
    }
    if (this.#draining.size === 0) return;
    const model = this.#ctx.manifest.name;
    const plan = await stack.reactive.store.current(model);
    const placed = new Set(plan?.backends.map((b) => b.url) ?? []);
    for (const url of [...this.#draining]) {
      const view = stack.router.pool.views().find((v) => v.url === url);
      if (view !== undefined && (placed.has(url) || view.inFlight > 0)) continue;
      stack.router.pool.remove(url);
      this.#draining.delete(url);
      await stack.scaler.scale(request(this.#ctx, this.#launched() - 1, this.#launched(), [url]));
    }
  }

  #launched(): number {
    return this.#ctx.stack.launcher.list().backends.filter((b) => b.state !== "stopping").length;
  }
}

function request(ctx: PolicyContext, target: number, current: number, remove: string[]) {
  return {
    model: ctx.manifest.name,
    contract: null,
    current,
    target,
    readyBy: null,
    remove,
    predictedTokensPerS: null,
    capacityPerBackend: ctx.capacityPerBackend,
    threshold: ctx.threshold,
    reason: "baseline",
  };
}

/** B1: queue depth, polled every 15 s (4 polls per simulated minute, spread over it). */
function queueDepthPolicy(ctx: PolicyContext): Policy {
  const scaler = new DrainingScaler(ctx);
  let lowSince: number | null = null;
  let desired = ctx.floor;
  let timer: ReturnType<typeof setInterval> | undefined;
  const poll = async () => {
    const now = ctx.stack.clock.now();
    const inFlight = ctx.stack.router.pool.views()
      .filter((v) => (v.role ?? "active") === "active")
      .reduce((sum, v) => sum + v.inFlight, 0);
    const wanted = Math.max(ctx.floor, Math.ceil(inFlight / ctx.inFlightTarget));
    if (wanted > desired) {
      desired = wanted;
      lowSince = null;
      await scaler.want(desired);
    } else if (wanted < desired) {
      lowSince ??= now;
      if (now - lowSince >= 5 * MINUTE) {
        desired = wanted;
        lowSince = null;
        await scaler.want(desired);
      }
    } else {
      lowSince = null;
    }
    await scaler.tick();
  };
  return {
    name: "reactive",
    start() {
      // 15 simulated seconds.
      timer = setInterval(() => void poll(), 15_000 / ctx.stack.clock.speed);
      return Promise.resolve();
    },
    tick: () => scaler.tick(),
    stop() {
      clearInterval(timer);
      return Promise.resolve();
    },
  };
}

/** B2: the production forecaster without the calendar, every 3 minutes. */
function forecastPolicy(ctx: PolicyContext): Policy {
  const scaler = new DrainingScaler(ctx);
  // The forecaster is re-selected every interval: a step shows up in the backtest at once.
  const forecasts = storeTrafficSource(ctx.stack.store, {
    model: () => ctx.manifest.name,
    historyMs: 2 * 86_400_000,
    reselectMs: 3 * MINUTE,
    partialLagMs: 0,
  });
  let next = -Infinity;
  return {
    name: "forecast",
    start: () => Promise.resolve(),
    async tick(now) {
      if (now >= next) {
        next = now + 3 * MINUTE;
        const forecast = await forecasts.forecastVolume(now, 3 * MINUTE);
        const peak = Math.max(0, ...(forecast?.points ?? []).map((p) => p.tokensPerS));
        await scaler.want(Math.ceil(peak / (ctx.capacityPerBackend * ctx.threshold) - 1e-9));
      }
      await scaler.tick();
    },
    stop: () => Promise.resolve(),
  };
}

/** B3: the event's size at T − 60 min; back to the floor after the event and the hold. */
function seedPolicy(ctx: PolicyContext): Policy {
  const scaler = new DrainingScaler(ctx);
  return {
    name: "seed",
    start: () => Promise.resolve(),
    async tick(now) {
      const { start, end } = ctx.scenario;
      if (now >= start - 60 * MINUTE && now < end + ctx.holdMs) {
        await scaler.want(ctx.eventBackends);
      }
      if (now >= end + ctx.holdMs) await scaler.want(ctx.floor);
      await scaler.tick();
    },
    stop: () => Promise.resolve(),
  };
}
