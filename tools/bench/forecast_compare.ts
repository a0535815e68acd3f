/**
 * @module `bench:prewarm`: forecast sources side by side in one replay — at every tick
 * (the job's cron moment) each source's prediction for the bucket the tick runs in (the
 * point ending at that bucket's end, as the job's own prediction check), compared once
 * the replay is over with what the bucket held. Measures; the bench prints.
 */
import type { TrafficSource } from "../../router/control/prewarm/prewarm_types.ts";

/** One source's predictions: bucket start → predicted tokens/s (null: no forecast). */
export type Predictions = Map<number, number | null>;

/** Records the sources' predictions tick by tick. */
export class ForecastComparison {
  readonly #sources: Record<string, TrafficSource>;
  readonly #bucketMs: number;
  readonly #horizonMs: number;
  readonly predictions = new Map<string, Predictions>();

  constructor(sources: Record<string, TrafficSource>, bucketMs: number, horizonMs: number) {
    this.#sources = sources;
    this.#bucketMs = bucketMs;
    this.#horizonMs = horizonMs;
    for (const name of Object.keys(sources)) this.predictions.set(name, new Map());
  }

  /** Each source's prediction for the bucket `now` falls in. */
  async record(now: number): Promise<void> {
    const from = Math.floor(now / this.#bucketMs) * this.#bucketMs;
    for (const [name, source] of Object.entries(this.#sources)) {
      const forecast = await source.forecastVolume(now, this.#horizonMs);
      const point = forecast?.points.find((p) => p.at === from + this.#bucketMs);
      this.predictions.get(name)!.set(from, point?.tokensPerS ?? null);
    }
  }
}

/** Mean absolute percentage error of `predictions` against `observed` over `buckets`. */
export function comparisonMape(
  predictions: Predictions,
  observed: (from: number) => number,
  buckets: (from: number) => boolean,
): { mape: number | null; count: number; missing: number } {
  let sum = 0;
  let count = 0;
  let missing = 0;
  for (const [from, predicted] of predictions) {
    if (!buckets(from)) continue;
    const actual = observed(from);
    if (!(actual > 0)) continue;
    if (predicted === null) {
      missing++;
      continue;
    }
    sum += Math.abs(predicted - actual) / actual;
    count++;
  }
  return { mape: count === 0 ? null : sum / count, count, missing };
}
