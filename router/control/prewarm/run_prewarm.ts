/**
 * @module One run of the pre-warm job — the `Deno.cron` handler's body, a plain function
 * of its ports and the time, so tests drive it on a manual clock.
 *
 * Steps:
 *   1. capacity per backend: the load signal's estimate (saturation.ts), else the last
 *      estimate, else the configured fallback;
 *   2. predicted volume over `horizon`: the forecast with events applied, plus events
 *      whose lead time has begun; the peak and its request-type mix;
 *   3. trigger: overload (peak > capacity · backends · threshold) or an event's lead time;
 *      without one the run keeps everything as it is;
 *   4. per-expert load at the peak (volume × mix × affinity) → a placement through the
 *      balancer (preview on max(observed, predicted) per expert — what the balancer's
 *      ticks judge while the pre-warm is in force; apply it unless the current plan already
 *      balances it as well) → warm exactly the parts each backend holds that the
 *      prediction needs (`POST /v2/residency/warm`, hottest first);
 *   5. scaling recommendation → the scaler (when it asks for a change or the job acts).
 * Every run returns a decision and logs it as `prewarm` with its reason. It never throws.
 */
import type { PlacementPlan } from "../../../shared/placement_plan.ts";
import { blendLoads } from "./blend_load.ts";
import { estimateCapacity, observedTokensPerS } from "./capacity.ts";
import { neededParts } from "./needed_parts.ts";
import {
  inLeadWindow,
  mixAt,
  peakPoint,
  predictExpertLoad,
  predictVolume,
} from "./predict_load.ts";
import type {
  PredictionCheck,
  PrewarmDecision,
  PrewarmDeps,
  ScalingRecommendation,
  WarmResult,
} from "./prewarm_types.ts";
import { decideTrigger, targetBackends } from "./recommend.ts";

/** State kept between runs (the last capacity estimate). */
export interface PrewarmMemory {
  capacity: number | null;
}

/**
 * A plan already in force counts as fitting when it balances within this of the proposal
 * (assumed: the balancer's hysteresis band width; at 0.02 the job re-placed 17 times in the
 * simulated event's lead hour, on nothing but noise in the observed load).
 */
const KEEP_MARGIN = 0.05;

/** Runs the job once at `now`; see the module doc. */
export async function runPrewarm(
  deps: PrewarmDeps,
  now: number,
  memory: PrewarmMemory = { capacity: null },
): Promise<PrewarmDecision> {
  const decision = await decide(deps, now, memory).catch((error): PrewarmDecision => ({
    at: now,
    model: deps.balancer.modelShape()?.name ?? null,
    trigger: "none",
    outcome: "error",
    reason: "pre-warm run failed",
    predicted: null,
    capacity: { perBackendTokensPerS: memory.capacity, backends: 0, source: "unknown" },
    plan: null,
    warmed: [],
    recommendation: null,
    scaler: null,
    error: error instanceof Error ? error.message : String(error),
  }));
  deps.logger[decision.outcome === "error" ? "error" : "info"]("prewarm", summary(decision));
  return decision;
}

async function decide(
  deps: PrewarmDeps,
  now: number,
  memory: PrewarmMemory,
): Promise<PrewarmDecision> {
  const { settings } = deps;
  const model = deps.balancer.modelShape();
  const backends = deps.backends();
  // Step 1: capacity per backend.
  const load = deps.poolLoad();
  const estimate = estimateCapacity(load);
  if (estimate !== null) memory.capacity = estimate;
  const perBackend = estimate ?? memory.capacity ?? deps.capacityFallback ?? null;
  const capacity: PrewarmDecision["capacity"] = {
    perBackendTokensPerS: perBackend,
    backends: backends.length,
    source: estimate !== null
      ? "reports"
      : memory.capacity !== null
      ? "remembered"
      : deps.capacityFallback !== undefined
      ? "configured"
      : "unknown",
  };
  const base = {
    at: now,
    model: model?.name ?? null,
    capacity,
    plan: null,
    warmed: [],
    scaler: null,
  };
  if (model === null) {
    return {
      ...base,
      trigger: "none",
      outcome: "skipped",
      reason: "model shape not known yet",
      predicted: null,
      recommendation: null,
    };
  }
  // Step 2: volume over the horizon, events applied.
  const events = await deps.events.upcoming(now);
  const forecast = await deps.traffic.forecastVolume(now, settings.horizon, events);
  const relevant = events.filter((e) =>
    inLeadWindow(e, now, settings.lead_time) || (e.start < now + settings.horizon && e.end > now)
  );
  const leading = relevant.filter((e) => inLeadWindow(e, now, settings.lead_time));
  const observed = observedTokensPerS(load);
  const points = predictVolume(forecast?.points ?? [], relevant, {
    now,
    defaultLeadMs: settings.lead_time,
    ...(observed === null ? {} : { fallbackTokensPerS: observed }),
  });
  const peak = peakPoint(points);
  const check = predictionCheck(points, forecast?.bucketMs, now);
  if (peak === null) {
    return {
      ...base,
      trigger: "none",
      outcome: "skipped",
      reason: "no prediction: the forecast has no points yet and no event is leading",
      predicted: null,
      recommendation: null,
      check,
    };
  }
  const mix = mixAt(peak, await deps.traffic.observedMix(now));
  // Step 3: trigger and recommendation.
  const { trigger, reason } = decideTrigger({
    predictedTokensPerS: peak.tokensPerS,
    capacityPerBackend: perBackend,
    backends: backends.length,
    threshold: settings.threshold,
    leadingEvents: leading.map((e) => e.name),
  });
  const recommendation: ScalingRecommendation | null = perBackend === null ? null : {
    model: model.name,
    current: backends.length,
    target: targetBackends(peak.tokensPerS, perBackend, settings.threshold, settings.max_backends),
    predictedTokensPerS: peak.tokensPerS,
    capacityPerBackend: perBackend,
    threshold: settings.threshold,
    reason,
  };
  const predictedBase = {
    tokensPerS: peak.tokensPerS,
    peakAt: peak.at,
    forecaster: forecast?.model ?? null,
    events: relevant.map((e) => e.name),
    mix,
  };
  const publish = async () =>
    recommendation !== null &&
      (trigger !== "none" || recommendation.target !== recommendation.current)
      ? await deps.scaler.publish(recommendation)
      : null;
  if (trigger === "none") {
    return {
      ...base,
      trigger,
      outcome: "kept",
      reason,
      predicted: { ...predictedBase, expertLoad: [] },
      recommendation,
      scaler: await publish(),
      check,
    };
  }
  // Step 4: per-expert load at the peak → placement → warm.
  const affinity = await deps.traffic.affinity(model.name, now);
  const expertLoad = affinity === null ? null : predictExpertLoad(peak.tokensPerS, mix, affinity, {
    layers: model.layers,
    experts: model.experts,
    topK: deps.topK?.() ?? 1,
  });
  if (expertLoad === null) {
    return {
      ...base,
      trigger,
      outcome: "skipped",
      reason: `${reason}; no request-type → expert affinity of the model's shape observed yet, ` +
        "nothing staged",
      predicted: { ...predictedBase, expertLoad: [] },
      recommendation,
      scaler: await publish(),
      check,
    };
  }
  const observedLoad = deps.observedExpertLoad?.(model.name) ?? null;
  const planLoad = observedLoad === null ? expertLoad : blendLoads(observedLoad, expertLoad);
  const staged = await stagePlacement(deps, model.name, planLoad);
  const warmed = staged.plan === null ? [] : await warmNeeded(deps, staged.plan, expertLoad);
  return {
    ...base,
    trigger,
    outcome: "prewarmed",
    reason: `${reason}; ${staged.note}`,
    predicted: { ...predictedBase, expertLoad },
    plan: staged.record,
    warmed,
    recommendation,
    scaler: await publish(),
    check,
  };
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

/** Applies the planner's placement for `expertLoad`, unless the current plan fits it as well. */
async function stagePlacement(
  deps: PrewarmDeps,
  model: string,
  expertLoad: number[][],
): Promise<{ plan: PlacementPlan | null; record: PrewarmDecision["plan"]; note: string }> {
  try {
    const preview = await deps.balancer.preview(expertLoad);
    const current = preview.current;
    if (
      current.version !== null && current.balancedness !== null &&
      current.balancedness >= preview.proposed.balancedness - KEEP_MARGIN
    ) {
      return {
        plan: await deps.currentPlan(model),
        record: { version: current.version, action: "kept_current", moved: 0 },
        note: `plan version ${current.version} already balances the predicted load (${
          current.balancedness.toFixed(3)
        } vs ${preview.proposed.balancedness.toFixed(3)})`,
      };
    }
    const switched = await deps.balancer.apply({ phy2log: preview.proposed.phy2log }, "prewarm");
    return {
      plan: await deps.currentPlan(model),
      record: { version: switched.version, action: "switched", moved: switched.moved },
      note: `staged plan version ${switched.version} for the predicted load (balancedness ${
        preview.proposed.balancedness.toFixed(3)
      }, ${switched.moved} replicas moved)`,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const plan = await deps.currentPlan(model).catch(() => null);
    return {
      plan,
      record: { version: plan?.version ?? null, action: "failed", moved: null, error: message },
      note: `placement not changed (${message}); warming under version ${plan?.version ?? "none"}`,
    };
  }
}

/** Warms, on every backend of `plan`, the parts the predicted load needs there. */
function warmNeeded(
  deps: PrewarmDeps,
  plan: PlacementPlan,
  expertLoad: number[][],
): Promise<WarmResult[]> {
  const parts = neededParts(plan, expertLoad);
  return Promise.all(
    plan.backends.flatMap((backend) => {
      const list = parts.get(backend.id) ?? [];
      return list.length === 0 ? [] : [deps.warmer.warm(backend, list)];
    }),
  );
}

/** The decision as a log line: everything but the per-expert matrix. */
function summary(decision: PrewarmDecision): Record<string, unknown> {
  const { predicted, ...rest } = decision;
  return {
    event: "prewarm",
    ...rest,
    predicted: predicted === null ? null : { ...predicted, expertLoad: undefined },
    warmed: decision.warmed.map((w) => ({
      backend: w.backend,
      requested: w.requested.length,
      warmed: w.warmed.length,
      already_warm: w.alreadyWarm.length,
      evicted: w.evicted.length,
      skipped: w.skipped.length,
      ...(w.error === undefined ? {} : { error: w.error }),
    })),
  };
}
