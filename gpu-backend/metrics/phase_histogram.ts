/**
 * @module Request phases as a histogram: per phase, counts per bucket and the sum,
 * kept with a few array increments per request and written out at scrape time
 * (`switchyard_backend_request_phase_seconds`).
 */
import type { Distribution } from "./scrape_histogram.ts";

/** Upper bounds in seconds: 50 µs to 5 s, what a phase of one request spans. */
export const PHASE_BOUNDS_S = [
  0.00005,
  0.0001,
  0.00025,
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
] as const;

/** Per-phase distributions of request time. */
export class PhaseHistogram<P extends string> {
  readonly #phases: readonly P[];
  readonly #counts: Map<P, number[]>;
  readonly #sums: Map<P, number>;

  constructor(phases: readonly P[]) {
    this.#phases = phases;
    this.#counts = new Map(phases.map((p) => [p, new Array(PHASE_BOUNDS_S.length + 1).fill(0)]));
    this.#sums = new Map(phases.map((p) => [p, 0]));
  }

  /** Adds one request's phases (milliseconds). */
  observe(ms: Readonly<Record<P, number>>): void {
    for (const phase of this.#phases) {
      const seconds = Math.max(ms[phase], 0) / 1000;
      let bucket = 0;
      while (bucket < PHASE_BOUNDS_S.length && seconds > PHASE_BOUNDS_S[bucket]!) bucket++;
      this.#counts.get(phase)![bucket]!++;
      this.#sums.set(phase, this.#sums.get(phase)! + seconds);
    }
  }

  /** The distributions now, one per phase (label `phase`). */
  distributions(): Distribution<"phase">[] {
    return this.#phases.map((phase) => ({
      labels: { phase },
      counts: [...this.#counts.get(phase)!],
      sum: this.#sums.get(phase)!,
    }));
  }
}
