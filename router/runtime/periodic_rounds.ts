/**
 * @module A round of work run now and then again `intervalMs` after each round ends,
 * until stopped — the schedule of health checks and load polling. Rounds never overlap;
 * `stop()` aborts the round's calls (through `signal`) and waits for it to end.
 */
import type { Clock, TimerHandle } from "./clock.ts";

/** Periodic, non-overlapping rounds on an injected clock. */
export class PeriodicRounds {
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #round: (signal: AbortSignal) => Promise<void>;
  #current: Promise<void> | undefined;
  #timer: TimerHandle | undefined;
  #running = false;
  #lifetime = new AbortController();

  constructor(clock: Clock, intervalMs: number, round: (signal: AbortSignal) => Promise<void>) {
    this.#clock = clock;
    this.#intervalMs = intervalMs;
    this.#round = round;
  }

  /** Aborted by `stop()`; calls of a round pass it on. */
  get signal(): AbortSignal {
    return this.#lifetime.signal;
  }

  /** Runs a first round, then one every interval until `stop()`. */
  start(): Promise<void> {
    if (this.#running) return this.#current ?? Promise.resolve();
    this.#running = true;
    this.#lifetime = new AbortController();
    return this.runNow().finally(() => this.#schedule());
  }

  /** Stops scheduling, aborts calls in progress and waits for the current round to end. */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#lifetime.abort();
    await this.#current;
  }

  /** Runs one round now (joins the round in progress, if any). */
  runNow(): Promise<void> {
    this.#current ??= this.#round(this.#lifetime.signal).finally(() => this.#current = undefined);
    return this.#current;
  }

  #schedule(): void {
    if (!this.#running) return;
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      void this.runNow().finally(() => this.#schedule());
    }, this.#intervalMs);
  }
}
