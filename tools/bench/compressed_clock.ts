/**
 * @module A compressed simulated clock for replay benchmarks: simulated time runs `speed`
 * times faster than real time, anchored so that real instant `realOrigin` (a
 * `performance.now()` value) is simulated instant `simOrigin`. Timers take simulated
 * delays and fire after `delay / speed` real milliseconds, so a component that schedules
 * on an injected clock (the balancer's `adjust_interval`) keeps its production setting
 * and reacts at the same simulated speed as everything else in the replay.
 */
import type { Clock, TimerHandle } from "../../router/runtime/clock.ts";
import { REAL_RUNTIME, type TimerQueueRuntime } from "../../shared/timer_queue.ts";

/** Real time and timers a {@linkcode CompressedClock} runs on (injectable for tests). */
export type RealTime = TimerQueueRuntime;

/** A {@linkcode Clock} on simulated time; see the module doc. */
export class CompressedClock implements Clock {
  readonly speed: number;
  readonly #real: RealTime;
  #realOrigin: number;
  #simOrigin: number;

  constructor(options: { speed: number; simOrigin: number; realOrigin?: number; real?: RealTime }) {
    if (!(options.speed > 0) || !Number.isFinite(options.speed)) {
      throw new RangeError(
        `Cannot compress time: speed must be a positive number, got ${options.speed}`,
      );
    }
    this.speed = options.speed;
    this.#real = options.real ?? REAL_RUNTIME;
    this.#realOrigin = options.realOrigin ?? this.#real.now();
    this.#simOrigin = options.simOrigin;
  }

  /** Re-anchors: real instant `realOrigin` is simulated instant `simOrigin` from now on. */
  anchor(simOrigin: number, realOrigin: number = this.#real.now()): void {
    this.#simOrigin = simOrigin;
    this.#realOrigin = realOrigin;
  }

  /** Simulated milliseconds since the Unix epoch. */
  now(): number {
    return this.#simOrigin + (this.#real.now() - this.#realOrigin) * this.speed;
  }

  /** Runs `callback` after `delayMs` simulated milliseconds (`delayMs / speed` real). */
  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    return this.#real.setTimeout(callback, Math.max(0, delayMs) / this.speed);
  }

  clearTimeout(handle: TimerHandle): void {
    this.#real.clearTimeout(handle);
  }
}
