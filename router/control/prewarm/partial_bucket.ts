/**
 * @module The bucket in progress in the pre-warm forecast, pure.
 *
 * Design.
 * - Idea: the forecast fits on settled buckets only (`prewarm_sources.ts`), so at the
 *   cron moment the freshest data — the bucket that just closed, and mid-bucket the one
 *   in progress — is a bucket behind. The store already holds most of such a bucket (the
 *   recorder flushes the open bucket every 1 s), so its tokens so far, `partial`, are
 *   used, scaled by the fraction of the bucket they cover.
 * - Covered fraction `f = clamp((min(now − lag, start + bucket) − start) ÷ bucket, 0, 1)`:
 *   what the store surely holds is everything up to `now − lag` (`lag`: the recorder's
 *   flush interval, 1 s; assumed, not measured).
 * - Blend: `f · (partial ÷ f) + (1 − f) · forecast = partial + (1 − f) · forecast` — the
 *   partial scaled to a whole bucket, weighted by how much of the bucket it saw, and the
 *   one-step forecast for the rest. `f = 1` gives the bucket as it is; `f = 0` the forecast.
 */

/** The fraction of bucket `[start, start + bucketMs)` the store surely holds at `now`. */
export function coveredFraction(
  start: number,
  bucketMs: number,
  now: number,
  lagMs: number,
): number {
  if (!(bucketMs > 0)) throw new RangeError(`Cannot cover a bucket of ${bucketMs} ms`);
  const covered = Math.min(now - lagMs, start + bucketMs) - start;
  return Math.min(1, Math.max(0, covered / bucketMs));
}

/**
 * The bucket's predicted tokens from `partial` tokens covering fraction `f` and the
 * one-step `forecast` (tokens per bucket); see the module doc.
 */
export function blendPartial(partial: number, f: number, forecast: number): number {
  if (!(f >= 0 && f <= 1)) throw new RangeError(`Cannot blend a covered fraction of ${f}`);
  return Math.max(0, partial) + (1 - f) * Math.max(0, forecast);
}
