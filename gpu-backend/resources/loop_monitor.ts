/**
 * @module How busy the backend's main thread is: a timer probe of the event loop.
 *
 * Deno's `performance.eventLoopUtilization()` answers zeros, so the backend measures the
 * loop from inside: a timer asks to fire every `periodMs`; when it fires late, the loop
 * was busy (HTTP, decoding, routing math, batching and — with `backend.executors: 0` —
 * onnxruntime itself) for at least the lateness. The counters are cumulative like the
 * rest of the load report: `lagMs` (Σ lateness beyond `toleranceMs`, the timer's own
 * slack) and `elapsedMs` (Σ time between probes). The router's host busy ratio is
 * Δlag ÷ Δelapsed: 0 for an idle loop, → 1 when timers wait far longer than their period
 * (every probe is late by much more than `periodMs`).
 *
 * `probeLag` is the pure step; {@linkcode LoopMonitor} runs it on the real timers.
 */

/** Cumulative event-loop counters (ms). */
export interface LoopCounters {
  /** Σ lateness of the probe timer beyond the tolerance. */
  lagMs: number;
  /** Σ time covered by probes. */
  elapsedMs: number;
}

/** Lateness of one probe: how much later than `periodMs` it fired, minus `toleranceMs`. */
export function probeLag(periodMs: number, actualMs: number, toleranceMs: number): number {
  return Math.max(0, actualMs - periodMs - toleranceMs);
}

/** Options of {@linkcode LoopMonitor}. */
export interface LoopMonitorOptions {
  /** Probe period; default 20 ms. */
  periodMs?: number;
  /** Timer slack not counted as busy; default 1 ms (assumed: Deno's timer granularity). */
  toleranceMs?: number;
  /** Monotonic clock; default `performance.now`. */
  now?: () => number;
}

/** Probes the event loop with a timer; see the module doc. */
export class LoopMonitor {
  readonly #periodMs: number;
  readonly #toleranceMs: number;
  readonly #now: () => number;
  readonly #counters: LoopCounters = { lagMs: 0, elapsedMs: 0 };
  #timer: number | undefined;
  #last = 0;

  constructor(options: LoopMonitorOptions = {}) {
    this.#periodMs = options.periodMs ?? 20;
    this.#toleranceMs = options.toleranceMs ?? 1;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Starts probing (idempotent). The timer does not keep the process alive. */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#last = this.#now();
    this.#arm();
  }

  /** Stops probing. */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The counters so far, including the probe in progress (its lateness so far). */
  counters(): LoopCounters {
    if (this.#timer === undefined) return { ...this.#counters };
    const since = this.#now() - this.#last;
    return {
      lagMs: this.#counters.lagMs + probeLag(this.#periodMs, since, this.#toleranceMs),
      elapsedMs: this.#counters.elapsedMs + since,
    };
  }

  #arm(): void {
    const timer = setTimeout(() => this.#fired(), this.#periodMs) as unknown as number;
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  #fired(): void {
    const now = this.#now();
    const actual = now - this.#last;
    this.#counters.lagMs += probeLag(this.#periodMs, actual, this.#toleranceMs);
    this.#counters.elapsedMs += actual;
    this.#last = now;
    this.#arm();
  }
}
