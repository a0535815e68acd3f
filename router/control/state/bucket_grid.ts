/**
 * @module The time grid every KV series of the router uses: buckets of `bucketMs`
 * starting at multiples of it, kept for `retentionMs`. Pure.
 */

/** Throws a `RangeError` naming the settings unless the grid is usable. */
export function checkBucketGrid(bucketMs: number, retentionMs: number, what: string): void {
  if (!(Number.isInteger(bucketMs) && bucketMs > 0)) {
    throw new RangeError(
      `Cannot keep ${what}: traffic.bucket must be a whole number of ms > 0, got ${bucketMs}`,
    );
  }
  if (!(retentionMs >= bucketMs)) {
    throw new RangeError(
      `Cannot keep ${what}: traffic.retention must be >= traffic.bucket, got ${retentionMs}`,
    );
  }
}

/** Start of the bucket holding `ms`. */
export function bucketStart(ms: number, bucketMs: number): number {
  return Math.floor(ms / bucketMs) * bucketMs;
}

/** Start of the oldest bucket kept at `now`: the first starting at or after `now − retention`. */
export function oldestKept(now: number, bucketMs: number, retentionMs: number): number {
  return Math.ceil((now - retentionMs) / bucketMs) * bucketMs;
}
