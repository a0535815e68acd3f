/**
 * @module Runs async work on the latest value offered, one run at a time, never making
 * the offerer wait: a value offered while a run is in progress waits for it, and of
 * several such values only the newest runs (the ones in between are skipped). For round
 * handlers that must not hold the loop that feeds them (load rounds, the leader's work).
 */

/** Latest-value, one-at-a-time runner; see the module doc. */
export class LatestRunner<T> {
  readonly #work: (value: T) => Promise<void> | void;
  readonly #onError: (error: unknown) => void;
  #running: Promise<void> | undefined;
  #next: { value: T } | undefined;
  /** Values skipped because a newer one came while a run was in progress. */
  skipped = 0;

  constructor(work: (value: T) => Promise<void> | void, onError: (error: unknown) => void) {
    this.#work = work;
    this.#onError = onError;
  }

  /** Runs `work(value)` now, or after the run in progress (replacing a value waiting). */
  offer(value: T): void {
    if (this.#next !== undefined) this.skipped++;
    this.#next = { value };
    this.#running ??= this.#drain().finally(() => this.#running = undefined);
  }

  /** Resolves when no run is in progress or waiting. */
  async settled(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  async #drain(): Promise<void> {
    for (let next = this.#next; next !== undefined; next = this.#next) {
      this.#next = undefined;
      try {
        await this.#work(next.value);
      } catch (error) {
        this.#onError(error);
      }
    }
  }
}
