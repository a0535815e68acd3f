/**
 * @module The router's own event-loop lag: a timer armed every `intervalMs` that
 * records how late it fired. A busy loop (CPU-bound work, a flood of requests) delays
 * every callback — timers, socket reads, health answers — by about the same amount, so
 * this drift tells "the backend was slow" from "the router was busy". Samples are kept
 * for `windowMs`; a timer overdue right now counts as lag too.
 */
import type { Clock, TimerHandle } from "../../runtime/clock.ts";

/** Options of {@linkcode LoopLagMonitor}. */
export interface LoopLagOptions {
  /** Time between samples; default 100 ms. */
  intervalMs?: number;
  /** How long samples are kept; default 10 s. */
  windowMs?: number;
}

/** Samples the event-loop lag on an injected clock. */
export class LoopLagMonitor {
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #windowMs: number;
  /** [sampled at, lag ms], oldest first. */
  #samples: Array<[number, number]> = [];
  #timer: TimerHandle | undefined;
  #due = 0;
  #running = false;

  constructor(clock: Clock, options: LoopLagOptions = {}) {
    this.#clock = clock;
    this.#intervalMs = options.intervalMs ?? 100;
    this.#windowMs = options.windowMs ?? 10_000;
  }

  /** Starts sampling (idempotent). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#arm();
  }

  /** Stops sampling. */
  stop(): void {
    this.#running = false;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    this.#due = this.#clock.now() + this.#intervalMs;
    this.#timer = this.#clock.setTimeout(() => {
      const now = this.#clock.now();
      this.#record(now, Math.max(0, now - this.#due));
      if (this.#running) this.#arm();
    }, this.#intervalMs);
  }

  #record(at: number, lagMs: number): void {
    this.#samples.push([at, lagMs]);
    const oldest = at - this.#windowMs;
    let drop = 0;
    while (drop < this.#samples.length && this.#samples[drop]![0] < oldest) drop++;
    if (drop > 0) this.#samples = this.#samples.slice(drop);
  }

  /** How late the pending sample timer is right now (0 when not overdue or stopped). */
  #overdue(): number {
    return this.#running ? Math.max(0, this.#clock.now() - this.#due) : 0;
  }

  /** The largest lag sampled at or after `since` (ms since epoch), or overdue now. */
  maxSince(since: number): number {
    let max = this.#overdue();
    for (let i = this.#samples.length - 1; i >= 0; i--) {
      const [at, lag] = this.#samples[i]!;
      // A sample taken after `since` measured lag that may have begun before it; one
      // taken within one lag of `since` still overlapped the waiting time.
      if (at < since) break;
      if (lag > max) max = lag;
    }
    return max;
  }

  /** The largest lag over the kept window (the metric). */
  recentMax(): number {
    return this.maxSince(this.#clock.now() - this.#windowMs);
  }
}
