/**
 * @module The traffic history without scheduled events, pure.
 *
 * The pre-warm job multiplies the forecast by the multiplier of the events ahead
 * (`predict_load.ts`), so the forecast must be of the baseline. Once an event runs, its
 * traffic is in the history; fitted as it is, a 5× event would be counted twice (the
 * forecast already follows the 5× level, and the job multiplies it by 5 again).
 *
 * A bucket `[s, s + bucket)` of which a fraction `f` lies inside an event of multiplier
 * `m` expects `base · (1 − f) + base · m · f`, so its baseline is
 * `value ÷ (1 + f · (m − 1))`. Where events overlap, the one of the largest multiplier
 * counts (as in the job). Only events the job still knows (not ended) can be removed;
 * the traffic of events that ended stays in the history.
 */
import type { PrewarmEvent } from "./prewarm_types.ts";

/** The factor an event multiplied bucket `[start, start + bucketMs)` by (1 when none). */
export function eventFactor(
  start: number,
  bucketMs: number,
  events: readonly Pick<PrewarmEvent, "start" | "end" | "multiplier">[],
): number {
  let factor = 1;
  for (const event of events) {
    const inside = Math.min(event.end, start + bucketMs) - Math.max(event.start, start);
    if (inside <= 0 || !(event.multiplier > 0)) continue;
    const f = Math.min(1, inside / bucketMs);
    factor = Math.max(factor, 1 + f * (event.multiplier - 1));
  }
  return factor;
}

/** `values` (bucket `i` starts at `firstStart + i · bucketMs`) with the events divided out. */
export function withoutEvents(
  values: readonly number[],
  firstStart: number,
  bucketMs: number,
  events: readonly Pick<PrewarmEvent, "start" | "end" | "multiplier">[],
): number[] {
  if (events.length === 0) return [...values];
  return values.map((v, i) => v / eventFactor(firstStart + i * bucketMs, bucketMs, events));
}
