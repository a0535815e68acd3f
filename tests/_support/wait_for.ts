/**
 * @module Readiness polling for tests: the tools' one bounded poll (`tools/wait_for.ts`)
 * with generous defaults — never a timing assertion.
 */
import {
  type Probe,
  waitFor as poll,
  type WaitForOptions as PollOptions,
} from "../../tools/wait_for.ts";

/** Options of {@linkcode waitFor}; every field has a default. */
export type WaitForOptions = Partial<Omit<PollOptions, "onTimeout">>;

/**
 * Polls `probe` every `intervalMs` (250) until it answers a value (not `undefined`, not
 * `false`: a predicate's `true` counts) and returns that value; throws after `timeoutMs`
 * (20 000), naming `what` and the last error (probes that throw count as "not yet").
 */
export function waitFor<T>(
  what: string,
  probe: Probe<T>,
  options: WaitForOptions = {},
): Promise<T> {
  return poll(what, probe, { timeoutMs: 20_000, retryErrors: true, ...options });
}
