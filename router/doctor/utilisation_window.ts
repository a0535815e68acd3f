/**
 * @module Executor utilisation over the last minutes, sampled every load round, counted
 * only while the pool serves traffic: the doctor's "utilisation below 70 %" asks how busy
 * accelerators are when there is work, not how idle an unused pool is.
 */
import type { PoolLoad } from "../load/pool_load.ts";

interface Sample {
  at: number;
  utilisation: number;
}

/** Sliding window of the pool's mean utilisation while busy; bounded. */
export class UtilisationWindow {
  readonly #windowMs: number;
  readonly #samples: Sample[] = [];

  /** `windowMs`: how far back to look (default 10 minutes). */
  constructor(windowMs = 600_000) {
    this.#windowMs = windowMs;
  }

  /** Adds one load round (skipped when no fresh backend moved tokens). */
  record(load: PoolLoad): void {
    const fresh = load.backends.filter((b) => !b.stale && b.utilisation !== undefined);
    const tokens = fresh.reduce((sum, b) => sum + (b.tokensPerS ?? 0), 0);
    if (fresh.length > 0 && tokens > 0) {
      const mean = fresh.reduce((sum, b) => sum + b.utilisation!, 0) / fresh.length;
      this.#samples.push({ at: load.at, utilisation: mean });
    }
    while (this.#samples.length > 0 && this.#samples[0]!.at < load.at - this.#windowMs) {
      this.#samples.shift();
    }
  }

  /** Mean utilisation over the busy rounds in the window ending at `now`; `undefined` if none. */
  mean(now: number): number | undefined {
    const recent = this.#samples.filter((s) => s.at >= now - this.#windowMs && s.at <= now);
    if (recent.length === 0) return undefined;
    return recent.reduce((sum, s) => sum + s.utilisation, 0) / recent.length;
  }
}
