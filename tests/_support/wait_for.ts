/** @module Readiness polling for end-to-end tests: generous, never a timing assertion. */

/**
 * Polls `probe` every 250 ms until it answers a value (not `undefined`); a probe that throws
 * counts as "not yet". Throws after `ms`, naming `what` and the last error.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ""}`);
}
