/**
 * @module At most one log line per key per interval, carrying how many events it
 * stands for (pure; time comes from the caller). Shedding under overload happens
 * thousands of times a second; one line per reason every few seconds says as much.
 */

/** Decides when an event of a key gets a log line. */
export class LogThrottle {
  readonly #intervalMs: number;
  /** key → [time of the last line, events since (the next line's count)]. */
  readonly #keys = new Map<string, [number, number]>();

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  /**
   * Counts one event of `key`; returns the number of events the line written now
   * should report (this one included), or undefined when no line is due.
   */
  event(key: string, now: number): number | undefined {
    const entry = this.#keys.get(key);
    if (entry === undefined || now - entry[0] >= this.#intervalMs) {
      const count = (entry?.[1] ?? 0) + 1;
      this.#keys.set(key, [now, 0]);
      return count;
    }
    entry[1]++;
    return undefined;
  }
}
