/**
 * @module A {@linkcode Clock} whose time moves only when a test calls `advance()`.
 *
 * Timers fire in due order; between timers `advance()` yields to the event loop so the
 * async work a timer starts (a health check, a fetch) runs before time moves on.
 */
import type { Clock, TimerHandle } from "../../../router/runtime/clock.ts";

interface PendingTimer {
  id: number;
  at: number;
  callback: () => void;
}

/** Lets queued promise callbacks and zero-delay work run (no real waiting). */
async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

/** A hand-driven clock for tests. */
export class ManualClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers: PendingTimer[] = [];

  /** Starts at `startMs` (default 1 700 000 000 000, a fixed epoch time). */
  constructor(startMs = 1_700_000_000_000) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const id = this.#nextId++;
    this.#timers.push({ id, at: this.#now + Math.max(0, delayMs), callback });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((timer) => timer.id !== handle);
  }

  /** Number of timers not yet fired. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /** Moves time forward by `ms`, firing due timers in order and settling after each. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle();
    for (;;) {
      const due = this.#timers
        .filter((timer) => timer.at <= target)
        .sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (due === undefined) break;
      this.#timers = this.#timers.filter((timer) => timer !== due);
      // Never backwards: after a stall(), overdue timers fire late, at the current time.
      this.#now = Math.max(this.#now, due.at);
      due.callback();
      await settle();
    }
    this.#now = Math.max(this.#now, target);
  }

  /**
   * Moves time forward by `ms` without firing timers, as a blocked event loop would:
   * timers that fell due fire late, on the next `advance()`.
   */
  stall(ms: number): void {
    this.#now += ms;
  }

  /** Lets pending async work run without moving time. */
  settle(): Promise<void> {
    return settle();
  }
}
