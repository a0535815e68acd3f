/**
 * @module The one bounded poll the tools share (launchers and benchmarks): ask a probe
 * every `intervalMs` until it answers, for at most `timeoutMs`.
 */

/** Options of {@linkcode waitFor}. */
export interface WaitForOptions {
  /** How long to keep asking (ms). */
  timeoutMs: number;
  /** Pause between two probes (ms); default 250. */
  intervalMs?: number;
  /**
   * Whether a probe that throws counts as "not yet" (true) or ends the wait with its
   * error at once (false, the default).
   */
  retryErrors?: boolean;
  /**
   * When `timeoutMs` pass: `"throw"` (the default) throws `timed out after N ms waiting
   * for …`; `"resolve"` resolves `undefined`, for waits a run may go on without.
   */
  onTimeout?: "throw" | "resolve";
}

/**
 * Polls `probe` until it answers a value (not `undefined`, not `false`: a predicate's
 * `true` counts) and returns that value; see {@linkcode WaitForOptions} for the end.
 */
export function waitFor<T>(
  what: string,
  probe: () => Promise<T | false | undefined>,
  options: WaitForOptions & { onTimeout: "resolve" },
): Promise<T | undefined>;
export function waitFor<T>(
  what: string,
  probe: () => Promise<T | false | undefined>,
  options: WaitForOptions,
): Promise<T>;
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | false | undefined>,
  options: WaitForOptions,
): Promise<T | undefined> {
  const { timeoutMs, intervalMs = 250, retryErrors = false } = options;
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      if (!retryErrors) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  if (options.onTimeout === "resolve") return undefined;
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
