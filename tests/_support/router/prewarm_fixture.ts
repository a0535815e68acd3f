/**
 * @module Test fixture: {@linkcode PrewarmDeps} over a real `Balancer` (fake plan backends,
 * in-memory KV, manual clock) with settable traffic, events and pool load, a fake pool
 * whose members the test makes ready, and a recording scaler that "starts" the spare
 * backends (as the launcher would) when it acts.
 */
import type { PlanBackend } from "../../../shared/placement_plan.ts";
import type { BackendRole } from "../../../router/serve/pool/backend_view.ts";
import { stagePlan } from "../../../router/control/balancer/plan_switch.ts";
import { proposePlacement } from "../../../router/control/balancer/rebalancer.ts";
import { type BalancerFixture, balancerFixture, MODEL } from "./balancer_fixture.ts";
import type { CapacitySignals } from "../../../router/control/prewarm/capacity.ts";
import type {
  ExpertAffinity,
  PoolMember,
  PrewarmDeps,
  PrewarmEvent,
  PrewarmSettings,
  ScaledBackend,
  Scaler,
  ScaleRequest,
  ScalerOutcome,
  VolumeForecast,
} from "../../../router/control/prewarm/prewarm_types.ts";
import { VirtualPool } from "../../../tools/sim/capacity_pool.ts";

/** The fixture's backends: two serve, two are spares a scaler can start. */
export const SERVING = ["127.0.0.1:9001", "127.0.0.1:9002"];
export const SPARES = ["127.0.0.1:9003", "127.0.0.1:9004"];

/**
 * An in-memory pool: the simulator's {@linkcode VirtualPool} whose added members wait for
 * the test to ready them (a health round), and whose views are copies.
 */
export class FakePool extends VirtualPool {
  constructor(ids: readonly string[]) {
    super(ids.map((id) => `http://${id}`), { model: "m", addedReady: false });
  }

  override views(): readonly PoolMember[] {
    return this.members.map((m) => ({ ...m }));
  }

  /** Marks `url` as passing its checks and describing the model (a health round). */
  ready(url: string): void {
    const member = this.members.find((m) => m.url === url);
    if (member === undefined) throw new Error(`no member ${url}`);
    member.healthy = true;
    member.models = ["m"];
    member.details = { backend_id: member.name };
  }

  /** Active members as a plan names them. */
  active(): PlanBackend[] {
    return this.withRole("active");
  }

  role(id: string): BackendRole | undefined {
    return this.members.find((m) => m.name === id)?.role;
  }
}

/** A scaler recording requests; acting, it "starts" spares and reports those the test readies. */
export class RecordingScaler implements Scaler {
  readonly name = "recording";
  readonly requests: ScaleRequest[] = [];
  readonly #spares: string[];
  readonly #started: { url: string; at: number }[] = [];
  readonly #ready = new Map<string, number>();
  readonly #running = new Set<string>();
  /** Outcome status; `failed` simulates a scaler that fails. */
  status: ScalerOutcome["status"] = "requested";

  constructor(readonly acts: boolean, spares: readonly string[], readonly now: () => number) {
    this.#spares = spares.map((id) => `http://${id}`);
  }

  scale(request: ScaleRequest): Promise<ScalerOutcome> {
    this.requests.push(request);
    if (!this.acts || this.status === "failed") {
      return Promise.resolve({ scaler: this.name, status: this.acts ? "failed" : "reported" });
    }
    for (const url of request.remove) this.#running.delete(url);
    const started: string[] = [];
    while (SERVING.length + this.#running.size < request.target && this.#spares.length > 0) {
      const url = this.#spares.shift()!;
      this.#started.push({ url, at: this.now() });
      this.#running.add(url);
      started.push(url);
    }
    return Promise.resolve({
      scaler: this.name,
      status: this.status,
      started,
      removed: request.remove,
    });
  }

  /** URLs it runs now (started, not removed). */
  get running(): string[] {
    return [...this.#running];
  }

  /** URLs started so far. */
  get started(): string[] {
    return this.#started.map((s) => s.url);
  }

  /** The launcher says `url` is ready now. */
  markReady(url: string): void {
    this.#ready.set(url, this.now());
  }

  ready(): Promise<ScaledBackend[]> {
    return Promise.resolve(this.#started.flatMap((s) => {
      const readyAt = this.#ready.get(s.url);
      return readyAt === undefined || !this.#running.has(s.url)
        ? []
        : [{ url: s.url, requestedAt: s.at, readyAt }];
    }));
  }
}

/** What a test sets and reads. */
export interface PrewarmFixture {
  deps: PrewarmDeps;
  f: BalancerFixture;
  pool: FakePool;
  scaler: RecordingScaler;
  traffic: {
    forecast: VolumeForecast | null;
    mix: Record<string, number> | null;
    affinity: ExpertAffinity | null;
  };
  events: { list: PrewarmEvent[] };
  load: { current: CapacitySignals | null };
  [Symbol.asyncDispose](): Promise<void>;
}

/** A pool load where each of `backends` serves `tokensPerS` at `utilisation`. */
export function poolLoad(
  _at: number,
  backends: readonly string[],
  tokensPerS: number,
  utilisation: number,
): CapacitySignals {
  return {
    backends: backends.map((id) => ({ id, stale: false, utilisation, tokensPerS })),
  };
}

/** Flat forecast of `tokensPerS` every minute over `horizonMs` after `now`. */
export function flatForecast(now: number, horizonMs: number, tokensPerS: number): VolumeForecast {
  const points = [];
  for (let at = now + 60_000; at <= now + horizonMs; at += 60_000) points.push({ at, tokensPerS });
  return { points, model: "seasonal_naive", bucketMs: 60_000 };
}

/** Pre-warm deps over a balancer fixture whose static plan is in place. */
export async function prewarmFixture(
  settings: Partial<PrewarmSettings> = {},
  options: { acts?: boolean } = {},
): Promise<PrewarmFixture> {
  const pool = new FakePool(SERVING);
  const f = await balancerFixture({}, {
    backends: [...SERVING, ...SPARES],
    members: () => pool.active(),
  });
  await f.balancer.tick(); // the static plan over the serving pair
  const scaler = new RecordingScaler(options.acts ?? true, SPARES, () => f.clock.now());
  const fixture = {
    f,
    pool,
    scaler,
    traffic: { forecast: null, mix: null, affinity: null } as PrewarmFixture["traffic"],
    events: { list: [] as PrewarmEvent[] },
    load: { current: null as CapacitySignals | null },
  };
  const deps: PrewarmDeps = {
    settings: {
      enabled: true,
      horizon: 15 * 60_000,
      threshold: 0.8,
      lead_time: 3_600_000,
      scale_down_hold: 10 * 60_000,
      ready_timeout: 15 * 60_000,
      track_interval: 5_000,
      ...settings,
    },
    traffic: {
      forecastVolume: () => Promise.resolve(fixture.traffic.forecast),
      observedMix: () => Promise.resolve(fixture.traffic.mix),
      affinity: () => Promise.resolve(fixture.traffic.affinity),
    },
    events: {
      upcoming: (now) => Promise.resolve(fixture.events.list.filter((e) => e.end > now)),
    },
    balancer: f.balancer,
    placement: {
      propose: (load, backends) =>
        proposePlacement(load, { model: MODEL, backends, redundancy: 0.25, reason: "prewarm" }),
      stage: (placement) =>
        stagePlan(placement, {
          store: f.store,
          client: f.planClient,
          clock: f.clock,
          logger: f.logger,
        }),
    },
    scaler,
    pool,
    currentPlan: (model) => f.store.current(model),
    poolLoad: () => fixture.load.current,
    topK: () => 2,
    clock: f.clock,
    logger: f.logger,
  };
  return {
    ...fixture,
    deps,
    async [Symbol.asyncDispose]() {
      await f[Symbol.asyncDispose]();
    },
  };
}
