/**
 * @module A mergeable latency histogram, pure: log-spaced buckets (each 10 % wider than
 * the last, from 0.5 ms), so histograms of several routers add up bucket by bucket and a
 * percentile of the sum is within one bucket (≤ 10 %) of the exact one. Stored sparse:
 * `{[bucket index]: count}`.
 */

/** Lower edge of bucket 0 (ms). */
const BASE_MS = 0.5;
/** Growth per bucket. */
const GROWTH = 1.1;
/** Buckets beyond this index count in the last one (~ 0.5 ms × 1.1^200 ≈ 95 h). */
const LAST = 200;

/** Bucket index → requests. */
export type LatencyHistogram = Record<number, number>;

/** The bucket a latency falls in. */
export function latencyBucket(ms: number): number {
  if (!(ms > BASE_MS)) return 0;
  return Math.min(LAST, Math.floor(Math.log(ms / BASE_MS) / Math.log(GROWTH)) + 1);
}

/** The upper edge of bucket `index` (ms): what a percentile in that bucket reads as. */
export function bucketUpperMs(index: number): number {
  return BASE_MS * GROWTH ** index;
}

/** A histogram of `latenciesMs`. */
export function histogramOf(latenciesMs: Iterable<number>): LatencyHistogram {
  const histogram: LatencyHistogram = {};
  for (const ms of latenciesMs) {
    const bucket = latencyBucket(ms);
    histogram[bucket] = (histogram[bucket] ?? 0) + 1;
  }
  return histogram;
}

/** The sum of histograms (new object). */
export function mergeHistograms(histograms: Iterable<LatencyHistogram>): LatencyHistogram {
  const sum: LatencyHistogram = {};
  for (const histogram of histograms) {
    for (const [bucket, count] of Object.entries(histogram)) {
      sum[Number(bucket)] = (sum[Number(bucket)] ?? 0) + count;
    }
  }
  return sum;
}

/** Requests counted. */
export function histogramCount(histogram: LatencyHistogram): number {
  return Object.values(histogram).reduce((a, b) => a + b, 0);
}

/** The `q` quantile (0–1) as its bucket's upper edge; undefined when empty. */
export function histogramQuantile(histogram: LatencyHistogram, q: number): number | undefined {
  const count = histogramCount(histogram);
  if (count === 0) return undefined;
  const rank = Math.max(1, Math.ceil(q * count));
  let seen = 0;
  for (const bucket of Object.keys(histogram).map(Number).sort((a, b) => a - b)) {
    seen += histogram[bucket]!;
    if (seen >= rank) return bucketUpperMs(bucket);
  }
  return bucketUpperMs(LAST);
}
