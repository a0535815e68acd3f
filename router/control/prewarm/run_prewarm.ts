/**
 * @module One run of the pre-warm job — the `Deno.cron` handler's body, a plain function
 * of its ports, the capacity controller and the time, so tests drive it on a manual clock.
 *
 * Steps:
 *   1. capacity per backend: `prewarm.capacity_per_backend` when set, else the load
 *      signal's estimate (saturation.ts), else the last estimate; the lead time from
 *      measured cold starts;
 *   2. predicted volume over max(horizon, lead + hold): the forecast (without one yet, the
 *      traffic now) with events applied, plus events whose lead time has begun;
 *   3. capacity plan: N backends by T (`capacity_plan.ts`): the most any point within one
 *      lead time needs, the deadline of the first shortfall, what to keep after a peak;
 *   4. for a scale-up, the per-expert load at the peak (volume × mix × affinity) — the
 *      placement the contract stages for the target pool — and the traffic level at which
 *      it activates early (the ramp);
 *   5. the controller carries it out (scaler requests, staging, activation at the event,
 *      scale-down after the hold) and one tracking step runs.
 * Every run returns a decision and logs it as `prewarm` with its reason. It never throws.
 */
import { estimateCapacity, observedTokensPerS } from "./capacity.ts";
import type { CapacityController } from "./capacity_controller.ts";
import type { ContractInput } from "./capacity_contract.ts";
import { type CapacityPlan, planCapacity } from "./capacity_plan.ts";
import {
  mixAt,
  peakPoint,
  type PredictedPoint,
  predictExpertLoad,
  predictVolume,
} from "./predict_load.ts";
import type {
  PredictionCheck,
  PrewarmDecision,
  PrewarmDeps,
  PrewarmTrigger,
} from "./prewarm_types.ts";

/** State kept between runs (the last capacity estimate). */
export interface PrewarmMemory {
  capacity: number | null;
}

/** Share of the way from today's traffic to the event's at which the event counts as arrived. */
export const RAMP_SHARE = 0.5;

/** Runs the job once at `now`; see the module doc. */
export async function runPrewarm(
  deps: PrewarmDeps,
  controller: CapacityController,
  now: number,
  memory: PrewarmMemory = { capacity: null },
): Promise<PrewarmDecision> {
  const decision = await decide(deps, controller, now, memory).catch((error): PrewarmDecision => ({
    at: now,
    model: deps.balancer.modelShape()?.name ?? null,
    trigger: "none",
    outcome: "error",
    reason: "pre-warm run failed",
    predicted: null,
    capacity: { perBackendTokensPerS: memory.capacity, backends: 0, source: "unknown" },
    lead: controller.lead(),
    capacityPlan: null,
    contract: controller.contract(),
    members: controller.counts(),
    scaler: null,
    error: error instanceof Error ? error.message : String(error),
  }));
  deps.logger[decision.outcome === "error" ? "error" : "info"]("prewarm", summary(decision));
  return decision;
}

async function decide(
  deps: PrewarmDeps,
  controller: CapacityController,
  now: number,
  memory: PrewarmMemory,
): Promise<PrewarmDecision> {
  const { settings } = deps;
  const model = deps.balancer.modelShape();
  const serving = deps.pool.views().filter((m) => (m.role ?? "active") === "active").length;
  // Step 1: capacity per backend, lead time.
  const load = deps.poolLoad();
  const capacity = capacityNow(deps, memory, load, serving);
  const perBackend = capacity.perBackendTokensPerS;
  const lead = controller.lead();
  const base = { at: now, model: model?.name ?? null, capacity, lead };
  const done = async (
    rest: Omit<PrewarmDecision, keyof typeof base | "contract" | "members">,
  ): Promise<PrewarmDecision> => {
    await controller.track(now);
    return { ...base, ...rest, contract: controller.contract(), members: controller.counts() };
  };
  const none = { trigger: "none" as const, capacityPlan: null, scaler: null };
  if (model === null) {
    return await done({
      ...none,
      outcome: "skipped",
      reason: "model shape not known yet",
      predicted: null,
    });
  }
  // Step 2: volume far enough ahead to cover one lead time and the scale-down hold.
  const holdMs = settings.scale_down_hold ?? 600_000;
  const horizonMs = Math.max(settings.horizon, lead.leadMs + holdMs);
  const ahead = await volumeAhead(deps, { now, load, leadMs: lead.leadMs, horizonMs });
  const { forecast, observed, points } = ahead;
  const check = predictionCheck(points, forecast?.bucketMs, now);
  if (points.length === 0) {
    return await done({
      ...none,
      outcome: "skipped",
      reason: "no prediction: the forecast has no points yet and no event is near",
      predicted: null,
      check,
    });
  }
  const soon = points.filter((p) => p.at <= now + lead.leadMs);
  const shown = peakPoint(soon.length > 0 ? soon : points)!;
  if (perBackend === null) {
    return await done({
      ...none,
      outcome: "skipped",
      reason: "capacity per backend unknown: no load report allows an estimate yet",
      predicted: await predictedAt(deps, ahead, shown, null, now),
      check,
    });
  }
  // Step 3: N backends by T.
  const plan = planCapacity({
    now,
    points,
    capacityPerBackend: perBackend,
    threshold: settings.threshold,
    leadMs: lead.leadMs,
    serving,
    floor: controller.floor(),
    ceiling: settings.max_backends ?? null,
    holdMs,
    ...(forecast?.bucketMs === undefined ? {} : { bucketMs: forecast.bucketMs }),
  });
  const peak = points.find((p) => p.at === plan.peak?.at) ?? shown;
  const mix = mixAt(peak, await deps.traffic.observedMix(now));
  // Step 4: the contract's placement load and ramp.
  const expertLoad = plan.readyBy === null || deps.placement === undefined
    ? null
    : await placementLoad(deps, model, peak, mix, now);
  const predicted = await predictedAt(deps, ahead, peak, expertLoad, now);
  const input: ContractInput = {
    plan,
    model: model.name,
    capacityPerBackend: perBackend,
    threshold: settings.threshold,
    until: peak.event?.end ?? peak.at,
    load: expertLoad,
    rampTokensPerS: rampOf(plan, peak, points, observed, perBackend * serving * settings.threshold),
  };
  // Step 5: carry it out.
  const scaler = await controller.plan(now, input);
  const leadNote = `lead ${Math.round(lead.leadMs / 1000)} s (${lead.source})`;
  return await done({
    trigger: triggerOf(plan),
    outcome: plan.readyBy === null ? "kept" : "planned",
    reason: `${plan.reason}${cappedNote(deps, plan)}; ${leadNote}`,
    predicted,
    capacityPlan: plan,
    scaler,
    check,
  });
}

/**
 * Step 1: capacity per backend — `prewarm.capacity_per_backend`, else the estimate from
 * `load` (remembered in `memory`), else the last estimate, else the fallback — and its source.
 */
function capacityNow(
  deps: PrewarmDeps,
  memory: PrewarmMemory,
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
interface VolumeAhead {
  forecast: Awaited<ReturnType<PrewarmDeps["traffic"]["forecastVolume"]>>;
  relevant: Awaited<ReturnType<PrewarmDeps["events"]["upcoming"]>>;
  observed: number | null;
  points: PredictedPoint[];
}

/** Step 2: predicted volume over `horizonMs`: the forecast with events applied. */
async function volumeAhead(
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
async function predictedAt(
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

/** Why the plan acts: an event's lead time began, or the predicted load overloads the pool. */
function triggerOf(plan: CapacityPlan): PrewarmTrigger {
  return plan.readyBy === null ? "none" : plan.source === "event" ? "event_lead" : "overload";
}

/** The reason's note when `prewarm.max_backends` capped the plan (logged as a warning). */
function cappedNote(deps: PrewarmDeps, plan: CapacityPlan): string {
  if (!plan.capped) return "";
  deps.logger.warn("capacity plan capped", {
    event: "prewarm",
    needed: plan.needed,
    max_backends: deps.settings.max_backends,
    reason: plan.reason,
  });
  return `; capped at prewarm.max_backends ${deps.settings.max_backends}: ${plan.needed} needed`;
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
function summary(decision: PrewarmDecision): Record<string, unknown> {
  const { predicted, ...rest } = decision;
  return {
    event: "prewarm",
    ...rest,
    predicted: predicted === null ? null : { ...predicted, expertLoad: undefined },
  };
}
