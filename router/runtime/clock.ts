/**
 * @module The clock and timers the router uses, injected so tests drive time by hand.
 */

/** An opaque timer handle returned by {@linkcode Clock.setTimeout}. */
export type TimerHandle = unknown;

/** Wall-clock time and one-shot timers. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `callback` once after `delayMs`; returns a handle for {@linkcode Clock.clearTimeout}. */
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  /** Cancels a timer; unknown or fired handles are ignored. */
  clearTimeout(handle: TimerHandle): void;
}

/** The real clock: `Date.now()` and the global timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as number),
};
