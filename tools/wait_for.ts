/**
 * @module The one bounded poll (launchers, benchmarks, and through
 * `tests/_support/wait_for.ts` the tests): ask a probe every `intervalMs` until it
 * answers, for at most `timeoutMs`.
 */

/** Options of {@linkcode waitFor}. */
export interface WaitForOptions {
  /** How long to keep asking (ms). */
  timeoutMs: number;
  /** Pause between two probes (ms); default 250. */
  intervalMs?: number;
  /**
   * Whether a probe that throws counts as "not yet" (true: the last error is named when
   * the wait times out) or ends the wait with its error at once (false, the default).
   */
  retryErrors?: boolean;
  /** Asked after each probe that answered nothing: a reason ends the wait at once. */
  stop?: () => string | undefined;
  /** Added to the time-out error: what was seen last (output, lines, values). */
  detail?: () => string;
  /**
   * When `timeoutMs` pass: `"throw"` (the default) throws `timed out after N ms waiting
   * for …`; `"resolve"` resolves `undefined`, for waits a run may go on without.
   */
  onTimeout?: "throw" | "resolve";
}

/** What a probe answers: a value, or `undefined` / `false` for "not yet". */
export type Probe<T> = () => T | false | undefined | Promise<T | false | undefined>;

/**
 * Polls `probe` until it answers a value (not `undefined`, not `false`: a predicate's
 * `true` counts) and returns that value; see {@linkcode WaitForOptions} for the end.
 */
export function waitFor<T>(
  what: string,
  probe: Probe<T>,
  options: WaitForOptions & { onTimeout: "resolve" },
): Promise<T | undefined>;
export function waitFor<T>(what: string, probe: Probe<T>, options: WaitForOptions): Promise<T>;
export async function waitFor<T>(
  what: string,
  probe: Probe<T>,
  options: WaitForOptions,
): Promise<T | undefined> {
  const { timeoutMs, intervalMs = 250, retryErrors = false } = options;
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  while (performance.now() < deadline) {
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
  if (options.onTimeout === "resolve") return undefined;
  const detail = options.detail ? `: ${options.detail()}` : "";
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last}` : ""}${detail}`,
  );
}
