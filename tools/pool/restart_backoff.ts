/**
 * @module Exponential restart backoff, as Kubernetes' restart policy does it: the n-th
 * restart in a row waits `initial · factor^(n-1)`, capped at `max`; a child that stayed
 * up for `resetAfter` since its last start counts as healthy again, so its next crash
 * restarts after `initial` once more. Pure: the caller passes the uptime.
 */

/** Options of {@linkcode RestartBackoff}; all in milliseconds. */
export interface RestartBackoffOptions {
  /** Delay before the first restart of a series (default 250 ms). */
  initialMs?: number;
  /** Growth per consecutive restart (default 2). */
  factor?: number;
  /** Largest delay (default 30 s). */
  maxMs?: number;
  /** Uptime after which a child counts as healthy and the series starts over (default 60 s). */
  resetAfterMs?: number;
}

/** The delay before each restart of one supervised child. */
export class RestartBackoff {
  readonly #initialMs: number;
  readonly #factor: number;
  readonly #maxMs: number;
  readonly #resetAfterMs: number;
  #consecutive = 0;

  constructor(options: RestartBackoffOptions = {}) {
    this.#initialMs = options.initialMs ?? 250;
    this.#factor = options.factor ?? 2;
    this.#maxMs = options.maxMs ?? 30_000;
    this.#resetAfterMs = options.resetAfterMs ?? 60_000;
    if (!(this.#initialMs >= 0) || !(this.#factor >= 1) || !(this.#maxMs >= this.#initialMs)) {
      throw new RangeError(
        `Cannot build a restart backoff: need initial >= 0, factor >= 1 and max >= initial, got ${this.#initialMs}, ${this.#factor}, ${this.#maxMs}`,
      );
    }
  }

  /** Restarts in the current series (0 after a healthy run). */
  get consecutive(): number {
    return this.#consecutive;
  }

  /** The delay before restarting a child that ran for `uptimeMs` since it was started. */
  next(uptimeMs: number): number {
    if (uptimeMs >= this.#resetAfterMs) this.#consecutive = 0;
    const delay = this.#initialMs * Math.pow(this.#factor, this.#consecutive);
    this.#consecutive++;
    return Math.min(delay, this.#maxMs);
  }
}
