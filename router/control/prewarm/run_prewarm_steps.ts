/**
 * @module Steps 1–4 of a pre-warm run (`run_prewarm.ts` tells them in order): capacity per
 * backend, the predicted volume and how it compared with the traffic, the capacity plan,
 * and the contract it stages (placement load at the peak, the ramp).
 */
import { estimateCapacity, observedTokensPerS } from "./capacity.ts";
import type { CapacityController } from "./capacity_controller.ts";
import type { ContractInput } from "./capacity_contract.ts";
import { type CapacityPlan, planCapacity } from "./capacity_plan.ts";
import { mixAt, type PredictedPoint, predictExpertLoad, predictVolume } from "./predict_load.ts";
import type { PredictionCheck, PrewarmDecision, PrewarmDeps } from "./prewarm_types.ts";

/** Share of the way from today's traffic to the event's at which the event counts as arrived. */
export const RAMP_SHARE = 0.5;

/**
 * Step 1: capacity per backend — `prewarm.capacity_per_backend`, else the estimate from
 * `load` (remembered in `memory`), else the last estimate, else the fallback — and its source.
 */
export function capacityNow(
  deps: PrewarmDeps,
  memory: { capacity: number | null },
  load: ReturnType<PrewarmDeps["poolLoad"]>,
  serving: number,
): PrewarmDecision["capacity"] {
  const estimate = estimateCapacity(load);
  if (estimate !== null) memory.capacity = estimate;
  const configured = deps.settings.capacity_per_backend;
  const perBackend = configured ?? estimate ?? memory.capacity ?? deps.capacityFallback ?? null;
  return {
    perBackendTokensPerS: perBackend,
    backends: serving,
    source: configured !== undefined
      ? "configured"
      : estimate !== null
      ? "reports"
      : memory.capacity !== null
      ? "remembered"
      : deps.capacityFallback !== undefined
      ? "configured"
      : "unknown",
  };
}

/** Step 2's prediction: the forecast, the events within the horizon, the traffic now, the points. */
export interface VolumeAhead {
  forecast: Awaited<ReturnType<PrewarmDeps["traffic"]["forecastVolume"]>>;
  relevant: Awaited<ReturnType<PrewarmDeps["events"]["upcoming"]>>;
  observed: number | null;
  points: PredictedPoint[];
}

/** Step 2: predicted volume over `horizonMs`: the forecast with events applied. */
export async function volumeAhead(
  deps: PrewarmDeps,
  options: {
    now: number;
    load: ReturnType<PrewarmDeps["poolLoad"]>;
    leadMs: number;
    horizonMs: number;
  },
): Promise<VolumeAhead> {
  const { now, horizonMs } = options;
  const events = await deps.events.upcoming(now);
  const forecast = await deps.traffic.forecastVolume(now, horizonMs, events);
  const relevant = events.filter((e) => e.start < now + horizonMs && e.end > now);
  const observed = observedTokensPerS(options.load);
  // Without a forecast yet, the traffic now is the prediction of last resort.
  const forecastPoints = forecast?.points.length
    ? forecast.points
    : observed === null
    ? []
    : [{ at: now, tokensPerS: observed }];
  const points = predictVolume(forecastPoints, relevant, {
    now,
    defaultLeadMs: options.leadMs,
    ...(observed === null ? {} : { fallbackTokensPerS: observed }),
  });
  return { forecast, relevant, observed, points };
}

/** The decision's `predicted`: `point`'s volume, the forecaster, events, mix and expert load. */
export async function predictedAt(
  deps: PrewarmDeps,
  ahead: VolumeAhead,
  point: PredictedPoint,
  expertLoad: number[][] | null,
  now: number,
) {
  return {
    tokensPerS: point.tokensPerS,
    peakAt: point.at,
    forecaster: ahead.forecast?.model ?? null,
    events: ahead.relevant.map((e) => e.name),
    mix: mixAt(point, await deps.traffic.observedMix(now)),
    expertLoad: expertLoad ?? [],
  };
}

/** Step 3: N backends by T, within the controller's floor and `prewarm.max_backends`. */
export function planBackends(
  deps: PrewarmDeps,
  controller: CapacityController,
  at: {
    now: number;
    points: PredictedPoint[];
    perBackend: number;
    leadMs: number;
    serving: number;
    holdMs: number;
    bucketMs: number | undefined;
  },
): CapacityPlan {
  const { settings } = deps;
  return planCapacity({
    now: at.now,
    points: at.points,
    capacityPerBackend: at.perBackend,
    threshold: settings.threshold,
    leadMs: at.leadMs,
    serving: at.serving,
    floor: controller.floor(),
    ceiling: settings.max_backends ?? null,
    holdMs: at.holdMs,
    ...(at.bucketMs === undefined ? {} : { bucketMs: at.bucketMs }),
  });
}

/** Step 4: the contract for `plan` — the placement load at its peak and the ramp. */
export async function contractInput(
  deps: PrewarmDeps,
  at: {
    now: number;
    model: { name: string; layers: number; experts: number };
    plan: CapacityPlan;
    peak: PredictedPoint;
    points: PredictedPoint[];
    observed: number | null;
    perBackend: number;
    serving: number;
  },
): Promise<ContractInput> {
  const { now, model, plan, peak, perBackend } = at;
  const { threshold } = deps.settings;
  const mix = mixAt(peak, await deps.traffic.observedMix(now));
  const expertLoad = plan.readyBy === null || deps.placement === undefined
    ? null
    : await placementLoad(deps, model, peak, mix, now);
  return {
    plan,
    model: model.name,
    capacityPerBackend: perBackend,
    threshold,
    until: peak.event?.end ?? peak.at,
    load: expertLoad,
    rampTokensPerS: rampOf(plan, peak, at.points, at.observed, perBackend * at.serving * threshold),
  };
}

/**
 * `[layer][expert]` tokens/s at the peak — the contract's placement is planned for the peak's
 * own traffic (its volume, mix and affinity), not raised to today's: a placement for
 * max(pre-event, event) load serves the event worse (in the simulator its hour ran at
 * balancedness 0.73 vs 0.97). Without an affinity profile, what the balancer observes; null
 * when neither is known.
 */
async function placementLoad(
  deps: PrewarmDeps,
  model: { name: string; layers: number; experts: number },
  peak: PredictedPoint,
  mix: Record<string, number>,
  now: number,
): Promise<number[][] | null> {
  const affinity = await deps.traffic.affinity(model.name, now);
  const predicted = affinity === null ? null : predictExpertLoad(peak.tokensPerS, mix, affinity, {
    layers: model.layers,
    experts: model.experts,
    topK: deps.topK?.() ?? 1,
  });
  return predicted ?? deps.observedExpertLoad?.(model.name) ?? null;
}

/**
 * Router tokens/s at which the contract's traffic counts as arrived: for an event, the
 * traffic now plus {@linkcode RAMP_SHARE} of the way to its peak; for the forecast, what
 * the serving pool takes at the threshold. Null when the peak is not above today's.
 */
function rampOf(
  plan: CapacityPlan,
  peak: PredictedPoint,
  points: readonly PredictedPoint[],
  observed: number | null,
  servingCapacity: number,
): number | null {
  if (plan.readyBy === null) return null;
  if (plan.source !== "event") return servingCapacity;
  const today = observed ?? points.find((p) => p.event === null)?.tokensPerS ?? 0;
  return peak.tokensPerS > today ? today + RAMP_SHARE * (peak.tokensPerS - today) : null;
}

/**
 * The prediction for the bucket `now` falls in — the forecast point ending at that
 * bucket's end (events applied) — to compare with what the bucket held once closed;
 * null without a bucket length or such a point.
 */
export function predictionCheck(
  points: readonly { at: number; tokensPerS: number }[],
  bucketMs: number | undefined,
  now: number,
): PredictionCheck | null {
  if (bucketMs === undefined || !(bucketMs > 0)) return null;
  const to = Math.floor(now / bucketMs) * bucketMs + bucketMs;
  const point = points.find((p) => p.at === to);
  if (point === undefined) return null;
  return {
    from: to - bucketMs,
    to,
    predictedTokensPerS: point.tokensPerS,
    observedTokensPerS: null,
    error: null,
  };
}

/** The decision as a log line: everything but the per-expert matrix. */
