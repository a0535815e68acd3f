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
import type { CapacityController } from "./capacity_controller.ts";
import type { CapacityPlan } from "./capacity_plan.ts";
import { peakPoint } from "./predict_load.ts";
import type { PrewarmDecision, PrewarmDeps, PrewarmTrigger } from "./prewarm_types.ts";
import {
  capacityNow,
  contractInput,
  planBackends,
  predictedAt,
  predictionCheck,
  volumeAhead,
} from "./run_prewarm_steps.ts";

/** The fields of a decision that skipped planning (`reason` and `predicted` say why and what). */
const SKIPPED = { trigger: "none", capacityPlan: null, scaler: null, outcome: "skipped" } as const;

/** State kept between runs (the last capacity estimate). */
export interface PrewarmMemory {
  capacity: number | null;
}

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
  const skip = (reason: string, rest: Pick<PrewarmDecision, "predicted" | "check">) =>
    done({ ...SKIPPED, reason, ...rest });
  if (model === null) return await skip("model shape not known yet", { predicted: null });
  // Step 2: volume far enough ahead to cover one lead time and the scale-down hold.
  const holdMs = settings.scale_down_hold ?? 600_000;
  const horizonMs = Math.max(settings.horizon, lead.leadMs + holdMs);
  const ahead = await volumeAhead(deps, { now, load, leadMs: lead.leadMs, horizonMs });
  const { forecast, observed, points } = ahead;
  const check = predictionCheck(points, forecast?.bucketMs, now);
  if (points.length === 0) {
    const reason = "no prediction: the forecast has no points yet and no event is near";
    return await skip(reason, { predicted: null, check });
  }
  const soon = points.filter((p) => p.at <= now + lead.leadMs);
  const shown = peakPoint(soon.length > 0 ? soon : points)!;
  if (perBackend === null) {
    const reason = "capacity per backend unknown: no load report allows an estimate yet";
    return await skip(reason, {
      predicted: await predictedAt(deps, ahead, shown, null, now),
      check,
    });
  }
  // Step 3: N backends by T.
  const plan = planBackends(deps, controller, {
    now,
    points,
    perBackend,
    leadMs: lead.leadMs,
    serving,
    holdMs,
    bucketMs: forecast?.bucketMs,
  });
  const peak = points.find((p) => p.at === plan.peak?.at) ?? shown;
  // Step 4: the contract's placement load and ramp.
  const input = await contractInput(deps, {
    now,
    model,
    plan,
    peak,
    points,
    observed,
    perBackend,
    serving,
  });
  const predicted = await predictedAt(deps, ahead, peak, input.load, now);
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

function summary(decision: PrewarmDecision): Record<string, unknown> {
  const { predicted, ...rest } = decision;
  return {
    event: "prewarm",
    ...rest,
    predicted: predicted === null ? null : { ...predicted, expertLoad: undefined },
  };
}
