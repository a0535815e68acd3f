/**
 * @module Lead time from measured cold starts, pure.
 *
 * The thing that needs a lead time is a backend (a GPU pod: image pull, weight load), not
 * an expert session. Each backend the pre-warm job asked for is one sample: from the
 * scaler's request to the backend being ready in the pool (`readyMs`), plus the time it
 * took to load its expert set when the job staged the placement on it (`expertLoadMs`).
 *
 * lead = the `percentile` (default p95) of the samples' cold starts × (1 + `margin`) +
 * `runIntervalMs` (the job notices a need up to one run late). Without samples the
 * configured lead (`prewarm.lead_time`, an assumption) is used, and says so.
 */

/** One backend's measured cold start. */
export interface ColdStartSample {
  /** The backend (its URL or id). */
  backend: string;
  /** When it was recorded (ms since the epoch). */
  at: number;
  /** From the scaler's request to ready in the pool (ms). */
  readyMs: number;
  /** Loading its expert set when the placement was staged on it (ms); null: not yet known. */
  expertLoadMs: number | null;
}

/** The lead time the job plans with, and where it comes from. */
export interface LeadTime {
  /** Scale-ups start this long before the capacity is needed (ms). */
  leadMs: number;
  /** `measured` from samples, else `configured` (`prewarm.lead_time`). */
  source: "measured" | "configured";
  /** Samples it was computed from. */
  samples: number;
  /** The percentile used, e.g. 0.95. */
  percentile: number;
  /** Cold start (ready + expert load) at that percentile (ms); null without samples. */
  coldStartMs: number | null;
  /** Median cold start (ms); null without samples. */
  medianMs: number | null;
  /** Expert load time at that percentile (ms); null when none was measured. */
  expertLoadMs: number | null;
  margin: number;
  runIntervalMs: number;
}

/** Options of {@linkcode leadTime}. */
export interface LeadTimeOptions {
  /** `prewarm.lead_time` (ms): the lead before any sample. */
  configuredMs: number;
  /** Default 0.95. */
  percentile?: number;
  /** Relative margin on top of the percentile; default 0.25. */
  margin?: number;
  /** How often the job runs (ms); default 60 000. */
  runIntervalMs?: number;
}

/** A sample's cold start: ready plus expert load (ms). */
export function coldStartMs(sample: ColdStartSample): number {
  return sample.readyMs + (sample.expertLoadMs ?? 0);
}

/** The lead time for `samples`; see the module doc. */
export function leadTime(samples: readonly ColdStartSample[], options: LeadTimeOptions): LeadTime {
  const percentile = options.percentile ?? 0.95;
  const margin = options.margin ?? 0.25;
  const runIntervalMs = options.runIntervalMs ?? 60_000;
  if (!(percentile > 0 && percentile <= 1)) {
    throw new RangeError(
      `Cannot compute lead time: percentile must be in (0, 1], got ${percentile}`,
    );
  }
  const usable = samples.filter((s) => Number.isFinite(s.readyMs) && s.readyMs >= 0);
  if (usable.length === 0) {
    return {
      leadMs: options.configuredMs,
      source: "configured",
      samples: 0,
      percentile,
      coldStartMs: null,
      medianMs: null,
      expertLoadMs: null,
      margin,
      runIntervalMs,
    };
  }
  const cold = usable.map(coldStartMs).sort((a, b) => a - b);
  const loads = usable.flatMap((s) => s.expertLoadMs === null ? [] : [s.expertLoadMs])
    .sort((a, b) => a - b);
  const high = nearestRank(cold, percentile);
  return {
    leadMs: Math.ceil(high * (1 + margin) + runIntervalMs),
    source: "measured",
    samples: usable.length,
    percentile,
    coldStartMs: high,
    medianMs: nearestRank(cold, 0.5),
    expertLoadMs: loads.length === 0 ? null : nearestRank(loads, percentile),
    margin,
    runIntervalMs,
  };
}

/** Nearest-rank percentile of ascending `sorted` (never interpolates below a sample). */
export function nearestRank(sorted: readonly number[], q: number): number {
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

/** The last `limit` samples, newest kept; a backend's later sample replaces its earlier one. */
export class ColdStartBook {
  readonly #limit: number;
  #samples: ColdStartSample[] = [];

  constructor(limit = 50) {
    this.#limit = limit;
  }

  /** Adds or replaces the sample of `sample.backend`. */
  record(sample: ColdStartSample): void {
    this.#samples = [...this.#samples.filter((s) => s.backend !== sample.backend), sample]
      .slice(-this.#limit);
  }

  /** Sets the expert load time of `backend`'s sample, if it has one. */
  expertLoad(backend: string, ms: number): void {
    this.#samples = this.#samples.map((s) =>
      s.backend === backend ? { ...s, expertLoadMs: ms } : s
    );
  }

  /** The samples kept, oldest first. */
  samples(): readonly ColdStartSample[] {
    return this.#samples;
  }
}
