/**
 * @module Readiness polling for tests: the one bounded poll, generous, never a timing
 * assertion.
 */

/** Options of {@linkcode waitFor}; every field has a default. */
export interface WaitForOptions {
  /** How long to keep asking (ms); default 20 000. */
  timeoutMs?: number;
  /** Pause between two probes (ms); default 250. */
  intervalMs?: number;
  /**
   * Whether a probe that throws counts as "not yet" (default true: the last error is named
   * when the wait times out) or ends the wait with its error at once (false).
   */
  retryErrors?: boolean;
  /** Asked after each probe that answered nothing: a reason ends the wait at once. */
  stop?: () => string | undefined;
  /** Added to the time-out error: what was seen last (output, lines, values). */
  detail?: () => string;
}

/**
 * Polls `probe` every `intervalMs` until it answers a value (not `undefined`, not `false`:
 * a predicate's `true` counts) and returns that value; throws after `timeoutMs`, naming
 * `what`.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | false | undefined | Promise<T | false | undefined>,
  options: WaitForOptions = {},
): Promise<T> {
  const { timeoutMs = 20_000, intervalMs = 250, retryErrors = true } = options;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      if (!retryErrors) throw error;
      last = error;
    }
    const reason = options.stop?.();
    if (reason !== undefined) throw new Error(reason);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  const detail = options.detail ? `: ${options.detail()}` : "";
  throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ""}${detail}`);
}
