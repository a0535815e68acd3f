/**
 * @module The capacity a prediction calls for, pure: "N backends ready by T".
 *
 * Design.
 * - Need at a point: `ceil(tokens/s ÷ (capacity per backend · threshold))`, never below the
 *   floor (the pool's own size unless configured).
 * - Scale up: the most any point up to `now + lead` needs (an event's own `lead_time`, when
 *   longer, counts for its points). Capacity asked for now is ready
 *   at `now + lead` at the measured percentile, so that is as far as a request made now
 *   can matter; a need further out is planned by a later run. The deadline `readyBy` is the
 *   start of the first point that needs more than the pool serves with (an event's start
 *   when an event sets it; `now` when the pool is already short).
 * - Keep: while any point up to `now + lead + hold` needs more than the floor, that much
 *   stays; below it the plan says how far the pool may shrink (the controller drains only
 *   after the need stayed low for `hold`). Giving back capacity that is needed again
 *   within one lead time would only buy it back late.
 * - Ceiling (`prewarm.max_backends`, optional): a target above it is cut to it and marked
 *   `capped` (the job escalates); it never cuts below the floor or the pool's own size.
 */
import type { PredictedPoint } from "./predict_load.ts";

/** Input of {@linkcode planCapacity}. */
export interface CapacityPlanInput {
  now: number;
  /** Predicted router tokens/s with events applied; each `at` ends a bucket. */
  points: readonly PredictedPoint[];
  /** Tokens/s one backend sustains. */
  capacityPerBackend: number;
  /** Utilisation the plan sizes for (`prewarm.threshold`). */
  threshold: number;
  leadMs: number;
  /** Active backends serving now. */
  serving: number;
  /** Fewest backends ever planned. */
  floor: number;
  /** Most backends planned; null: no ceiling. */
  ceiling: number | null;
  /** Capacity needed within `lead + hold` is kept (ms). */
  holdMs: number;
  /** Bucket length of the points (ms); a point's need starts at `at − bucketMs`. Default 0. */
  bucketMs?: number;
}

/** What the prediction calls for. */
export interface CapacityPlan {
  /** Backends to have (after the ceiling). */
  target: number;
  /** Backends the prediction needs (before the ceiling). */
  needed: number;
  /** The target was cut to the ceiling. */
  capped: boolean;
  /** When `target` must be ready (ms since the epoch); null unless scaling up. */
  readyBy: number | null;
  /** Backends needed to keep until `now + lead + hold` (≥ floor). */
  keep: number;
  /** The point that sets `needed`. */
  peak: { at: number; tokensPerS: number } | null;
  /** `event` when an event's point sets the target, `forecast` when the forecast does, else `floor`. */
  source: "event" | "forecast" | "floor";
  /** The event setting the target, if any. */
  event: string | null;
  reason: string;
}

/** Backends needed for `tokensPerS` at `threshold` utilisation (0 for none). */
export function backendsFor(tokensPerS: number, capacityPerBackend: number, threshold: number) {
  if (!(capacityPerBackend > 0) || !(threshold > 0)) {
    throw new RangeError(
      `Cannot size capacity: capacity ${capacityPerBackend} and threshold ${threshold} must be > 0`,
    );
  }
  // The epsilon keeps an exact boundary (100 tokens/s at 50 per backend) at 2, not 3.
  return Math.max(0, Math.ceil(Math.max(0, tokensPerS) / (capacityPerBackend * threshold) - 1e-9));
}

/** The capacity plan at `input.now`; see the module doc. */
export function planCapacity(input: CapacityPlanInput): CapacityPlan {
  const { now, floor } = input;
  const bucketMs = input.bucketMs ?? 0;
  const need = (p: PredictedPoint) =>
    Math.max(floor, backendsFor(p.tokensPerS, input.capacityPerBackend, input.threshold));
  // An event's own lead_time is a minimum: its points count that far ahead too.
  const leadOf = (p: PredictedPoint) => Math.max(input.leadMs, p.event?.leadTimeMs ?? 0);
  const soon = input.points.filter((p) => p.at <= now + leadOf(p));
  const keepWindow = input.points.filter((p) => p.at <= now + leadOf(p) + input.holdMs);
  // Step 1: the most any point within one lead time needs, and the point that needs it.
  const peak = soon.reduce<PredictedPoint | null>(
    (best, p) => best === null || need(p) > need(best) ? p : best,
    null,
  );
  const needed = peak === null ? floor : need(peak);
  const keep = keepWindow.reduce((most, p) => Math.max(most, need(p)), floor);
  // Step 2: the ceiling never cuts below the floor or what serves already.
  const ceiling = input.ceiling === null ? Infinity : Math.max(input.ceiling, floor, input.serving);
  const target = Math.min(needed, ceiling);
  const capped = target < needed;
  // Step 3: the deadline: the first point that needs more than serves now.
  let readyBy: number | null = null;
  if (target > input.serving) {
    const short = soon.find((p) => need(p) > input.serving)!;
    readyBy = Math.max(now, short.event?.start ?? short.at - bucketMs);
  }
  const source = peak === null || needed <= floor
    ? "floor"
    : peak.event !== null
    ? "event"
    : "forecast";
  const event = source === "event" ? peak!.event!.name : null;
  return {
    target,
    needed,
    capped,
    readyBy,
    keep: Math.min(keep, ceiling),
    peak: peak === null ? null : { at: peak.at, tokensPerS: peak.tokensPerS },
    source,
    event,
    reason: reasonOf(input, { target, needed, capped, readyBy, peak, source, event }),
  };
}

function reasonOf(
  input: CapacityPlanInput,
  plan: Pick<CapacityPlan, "target" | "needed" | "capped" | "readyBy" | "source" | "event"> & {
    peak: PredictedPoint | null;
  },
): string {
  const per = `${input.capacityPerBackend.toFixed(1)} tokens/s per backend at ${input.threshold}`;
  if (plan.peak === null) return `no prediction within the lead time; floor ${input.floor}`;
  const what = plan.source === "event" ? `event "${plan.event}"` : "the forecast";
  const peak = `${plan.peak.tokensPerS.toFixed(1)} tokens/s`;
  const cap = plan.capped
    ? `; cut to prewarm.max_backends ${input.ceiling} (needs ${plan.needed})`
    : "";
  if (plan.readyBy === null) {
    return `${what} peaks at ${peak} within the lead time: ${plan.needed} backends at ${per} ` +
      `(${input.serving} serve)${cap}`;
  }
  return `${what} needs ${plan.needed} backends (${peak} at ${per}) by ${
    new Date(plan.readyBy).toISOString()
  }; ${input.serving} serve${cap}`;
}
