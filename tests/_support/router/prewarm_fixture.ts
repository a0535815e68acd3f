/**
 * @module Test fixture: {@linkcode PrewarmDeps} over a real `Balancer` (fake plan
 * backends, in-memory KV, manual clock) with settable traffic, events and pool load, a
 * recording residency warmer and a recording scaler.
 */
import type { PlanBackend } from "../../../shared/placement_plan.ts";
import { type BalancerFixture, balancerFixture } from "./balancer_fixture.ts";
import type { CapacitySignals } from "../../../router/control/prewarm/capacity.ts";
import type {
  ExpertAffinity,
  PrewarmDeps,
  PrewarmEvent,
  PrewarmSettings,
  Scaler,
  ScalerOutcome,
  ScalingRecommendation,
  VolumeForecast,
  WarmResult,
} from "../../../router/control/prewarm/prewarm_types.ts";

/** What a test sets and reads. */
export interface PrewarmFixture {
  deps: PrewarmDeps;
  f: BalancerFixture;
  traffic: {
    forecast: VolumeForecast | null;
    mix: Record<string, number> | null;
    affinity: ExpertAffinity | null;
  };
  events: { list: PrewarmEvent[] };
  pool: { load: CapacitySignals | null };
  warmCalls: { backend: string; parts: string[] }[];
  published: ScalingRecommendation[];
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
    backends: backends.map((id) => ({
      id,
      stale: false,
      utilisation,
      tokensPerS,
    })),
  };
}

/** Flat forecast of `tokensPerS` every minute over `horizonMs` after `now`. */
export function flatForecast(now: number, horizonMs: number, tokensPerS: number): VolumeForecast {
  const points = [];
  for (let at = now + 60_000; at <= now + horizonMs; at += 60_000) points.push({ at, tokensPerS });
  return { points, model: "seasonal_naive" };
}

/** Pre-warm deps over a balancer fixture whose static plan is in place. */
export async function prewarmFixture(
  settings: Partial<PrewarmSettings> = {},
): Promise<PrewarmFixture> {
  const f = await balancerFixture();
  await f.balancer.tick(); // the static plan
  const fixture: Omit<PrewarmFixture, "deps" | typeof Symbol.asyncDispose> = {
    f,
    traffic: { forecast: null, mix: null, affinity: null },
    events: { list: [] },
    pool: { load: null },
    warmCalls: [],
    published: [],
  };
  const scaler: Scaler = {
    name: "recording",
    publish(recommendation): Promise<ScalerOutcome> {
      fixture.published.push(recommendation);
      return Promise.resolve({ scaler: "recording", status: "reported" });
    },
  };
  const deps: PrewarmDeps = {
    settings: {
      enabled: true,
      horizon: 15 * 60_000,
      threshold: 0.8,
      lead_time: 3_600_000,
      max_backends: 8,
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
    warmer: {
      warm(backend: PlanBackend, parts: string[]): Promise<WarmResult> {
        fixture.warmCalls.push({ backend: backend.id, parts });
        return Promise.resolve({
          backend: backend.id,
          requested: parts,
          warmed: parts,
          alreadyWarm: [],
          evicted: [],
          skipped: [],
        });
      },
    },
    scaler,
    backends: () => f.backends.backends(),
    currentPlan: (model) => f.store.current(model),
    poolLoad: () => fixture.pool.load,
    topK: () => 2,
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
