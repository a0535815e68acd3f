/**
 * @module Online estimators the batching control law feeds on: the arrival rate of
 * request groups at one queue, and the service-time curve `s(n) = a + b·n` of one
 * part. Pure state machines over explicit timestamps (no clock inside).
 */

/** Arrival rate from exponentially weighted inter-arrival gaps. */
export class ArrivalRate {
  readonly #alpha: number;
  #meanGapMs = Infinity;
  #last: number | null = null;

  /** `alpha`: weight of the newest gap (default 0.2). */
  constructor(alpha = 0.2) {
    this.#alpha = alpha;
  }

  /** Records one arrival at `nowMs`. */
  observe(nowMs: number): void {
    if (this.#last !== null) {
      const gap = Math.max(nowMs - this.#last, 1e-3);
      this.#meanGapMs = Number.isFinite(this.#meanGapMs)
        ? this.#meanGapMs + this.#alpha * (gap - this.#meanGapMs)
        : gap;
    }
    this.#last = nowMs;
  }

  /**
   * Arrivals per ms at `nowMs`. A silence longer than the mean gap counts as a gap in
   * progress, so the rate decays when traffic stops instead of freezing at its peak.
   */
  perMs(nowMs: number): number {
    if (this.#last === null || !Number.isFinite(this.#meanGapMs)) return 0;
    const silence = nowMs - this.#last;
    const gap = silence > this.#meanGapMs
      ? this.#meanGapMs + this.#alpha * (silence - this.#meanGapMs)
      : this.#meanGapMs;
    return 1 / gap;
  }
}

/** Service time `s(rows) = fixedMs + perRowMs·rows`, fitted by forgetting least squares. */
export class ServiceCurve {
  readonly #decay: number;
  // Exponentially weighted sums for the least-squares line through (rows, ms).
  #w = 0;
  #x = 0;
  #y = 0;
  #xx = 0;
  #xy = 0;
  #fixedMs: number;
  #perRowMs: number;

  /** Starts from a prior `(fixedMs, perRowMs)`; `decay` forgets old samples (default 0.98). */
  constructor(prior: { fixedMs: number; perRowMs: number }, decay = 0.98) {
    this.#fixedMs = prior.fixedMs;
    this.#perRowMs = prior.perRowMs;
    this.#decay = decay;
  }

  /** Records one execution of `rows` rows that took `ms`. */
  observe(rows: number, ms: number): void {
    const d = this.#decay;
    this.#w = this.#w * d + 1;
    this.#x = this.#x * d + rows;
    this.#y = this.#y * d + ms;
    this.#xx = this.#xx * d + rows * rows;
    this.#xy = this.#xy * d + rows * ms;
    const meanX = this.#x / this.#w;
    const meanY = this.#y / this.#w;
    const varX = this.#xx / this.#w - meanX * meanX;
    if (varX > 1e-6) {
      const slope = (this.#xy / this.#w - meanX * meanY) / varX;
      this.#perRowMs = Math.max(slope, 0);
      this.#fixedMs = Math.max(meanY - this.#perRowMs * meanX, 0);
    } else {
      // One batch size seen so far: keep the slope, move the line through the mean.
      this.#fixedMs = Math.max(meanY - this.#perRowMs * meanX, 0);
    }
  }

  /** Predicted milliseconds for `rows` rows. */
  predict(rows: number): number {
    return this.#fixedMs + this.#perRowMs * rows;
  }

  /** Current coefficients. */
  get coefficients(): { fixedMs: number; perRowMs: number } {
    return { fixedMs: this.#fixedMs, perRowMs: this.#perRowMs };
  }
}
