/**
 * @module The pre-warm job's trigger and scaling math, pure.
 *
 * - Overload: the predicted peak exceeds `capacity · backends · threshold`.
 * - Trigger: `overload` first, else `event_lead` when an event's lead time has begun,
 *   else `none`.
 * - Target backends: `ceil(predicted / (capacity · threshold))`, clamped to
 *   `[1, max_backends]`; unknown capacity → no recommendation.
 */
import type { PrewarmTrigger } from "./prewarm_types.ts";

/** Input of {@linkcode decideTrigger}. */
export interface TriggerInput {
  predictedTokensPerS: number;
  /** Per backend; null when unknown. */
  capacityPerBackend: number | null;
  backends: number;
  threshold: number;
  /** Names of events whose lead time has begun. */
  leadingEvents: readonly string[];
}

/** Whether and why the job pre-warms. */
export function decideTrigger(input: TriggerInput): { trigger: PrewarmTrigger; reason: string } {
  const { capacityPerBackend: cap, backends, threshold } = input;
  const predicted = input.predictedTokensPerS;
  if (cap !== null && backends > 0) {
    const limit = cap * backends * threshold;
    if (predicted > limit) {
      return {
        trigger: "overload",
        reason: `predicted ${fmt(predicted)} tokens/s > capacity ${fmt(cap)} × ${backends} ` +
          `backends × threshold ${threshold} = ${fmt(limit)}`,
      };
    }
  }
  if (input.leadingEvents.length > 0) {
    return {
      trigger: "event_lead",
      reason: `lead time of event ${input.leadingEvents.map((n) => `"${n}"`).join(", ")} has begun`,
    };
  }
  const capacity = cap === null
    ? "capacity unknown"
    : `within capacity ${fmt(cap)} × ${backends} × ${threshold}`;
  return { trigger: "none", reason: `predicted ${fmt(predicted)} tokens/s ${capacity}` };
}

/** Backends needed for `predicted` at `threshold` utilisation, clamped to `[1, maxBackends]`. */
export function targetBackends(
  predicted: number,
  capacityPerBackend: number,
  threshold: number,
  maxBackends: number,
): number {
  if (!(capacityPerBackend > 0) || !(threshold > 0)) {
    throw new RangeError(
      `Cannot compute target backends: capacity ${capacityPerBackend} and threshold ${threshold} must be > 0`,
    );
  }
  const raw = Math.ceil(Math.max(0, predicted) / (capacityPerBackend * threshold));
  return Math.min(Math.max(raw, 1), Math.max(1, maxBackends));
}

function fmt(value: number): string {
  return value.toFixed(1);
}
