/**
 * @module The forecast service: reads a series' history from the traffic store, applies
 * the scheduled events and forecasts it (`forecast_series.ts`). `GET /api/forecast` and
 * the pre-warm job use it.
 *
 * History: the complete buckets from the first one ever written (or the oldest kept)
 * up to the current, still-open bucket, at most `maxHistoryBuckets`. The first
 * forecast point is the current bucket. A season is one day (`24h / bucket` buckets).
 * Per-request-type series: inside an event that gives a mix, the forecast is the
 * model's total forecast (event multiplier included) × the event's share of that type.
 * Results are cached until the bucket changes or the events do.
 */
import type { Clock } from "../../runtime/clock.ts";
import {
  concerns,
  eventMixAt,
  eventMultiplier,
  type ScheduledEvent,
} from "../events/scheduled_event.ts";
import type { Accuracy } from "./backtest.ts";
import { formatSeriesKey, type SeriesKey } from "../traffic/series_key.ts";
import type { TrafficStore } from "../traffic/traffic_store.ts";
import { forecastSeries } from "./forecast_series.ts";

/** Where the service reads events from (an `EventStore` fits). */
export interface EventCatalog {
  list(): Promise<ScheduledEvent[]>;
}

/** Options of {@linkcode ForecastService}. */
export interface ForecastServiceOptions {
  traffic: TrafficStore;
  events: EventCatalog;
  clock: Pick<Clock, "now">;
  /** Interval coverage; default 0.8. */
  coverage?: number;
  /** Longest history used; default 15 seasons (weekly Holt–Winters needs 14). */
  maxHistoryBuckets?: number;
}

/** One forecast bucket. */
export interface ForecastPoint {
  /** Bucket start (ms). */
  at: number;
  value: number;
  lower: number;
  upper: number;
}

/** A series' forecast. */
export interface ForecastResult {
  series: string;
  /** The chosen forecaster. */
  model: string;
  bucketMs: number;
  seasonLength: number;
  /** History buckets the models saw. */
  historyBuckets: number;
  points: ForecastPoint[];
  backtest: Record<string, Accuracy>;
  /** Events that changed a forecast point. */
  events: ScheduledEvent[];
}

const CACHE_SIZE = 64;

/** Forecasts traffic series; see the module doc. */
export class ForecastService {
  readonly #options: ForecastServiceOptions;
  readonly #cache = new Map<string, ForecastResult>();

  constructor(options: ForecastServiceOptions) {
    this.#options = options;
  }

  /** Bucket width (ms) of the series. */
  get bucketMs(): number {
    return this.#options.traffic.bucketMs;
  }

  /** Buckets per day. */
  get seasonLength(): number {
    return Math.max(1, Math.round(86_400_000 / this.bucketMs));
  }

  /** Forecast of `key` for the next `horizon` buckets, or `null` when the series is unknown. */
  async forecast(key: SeriesKey, horizon: number): Promise<ForecastResult | null> {
    if (!Number.isInteger(horizon) || horizon < 1) {
      throw new RangeError(`Cannot forecast: horizon must be an integer >= 1, got ${horizon}`);
    }
    const { traffic } = this.#options;
    if (!await traffic.has(key)) return null;
    const events = (await this.#options.events.list()).filter((e) => concerns(e, key.model));
    const current = traffic.bucketStart(this.#options.clock.now());
    const cacheKey = JSON.stringify([formatSeriesKey(key), horizon, current, events]);
    const cached = this.#cache.get(cacheKey);
    if (cached !== undefined) return cached;
    const result = await this.#compute(key, horizon, current, events);
    if (this.#cache.size >= CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(cacheKey, result);
    return result;
  }

  /**
   * Expected request-type shares of `model` at `at`: the mix of an event active then,
   * else the mix observed over the `lookbackMs` before now (default 24 h).
   */
  async expectedMix(model: string, at: number, lookbackMs = 86_400_000) {
    const imposed = eventMixAt(await this.#options.events.list(), at, model);
    if (imposed !== undefined) return { ...imposed };
    const now = this.#options.clock.now();
    return await this.#options.traffic.requestTypeMix(model, now - lookbackMs, now);
  }

  async #compute(
    key: SeriesKey,
    horizon: number,
    current: number,
    events: ScheduledEvent[],
  ): Promise<ForecastResult> {
    const { traffic } = this.#options;
    const bucketMs = traffic.bucketMs;
    const seasonLength = this.seasonLength;
    const maxBuckets = this.#options.maxHistoryBuckets ?? 15 * seasonLength;
    const first = (await traffic.index(key.model))?.firstBucket ?? current;
    const from = Math.max(first, traffic.oldestKept(), current - maxBuckets * bucketMs);
    const history = await traffic.values(key, from, current);
    const start = current - history.length * bucketMs;
    const at = (i: number) => start + i * bucketMs;
    const factors = Array.from(
      { length: history.length + horizon },
      (_, i) => eventMultiplier(events, at(i) + bucketMs / 2),
    );
    const forecast = forecastSeries(history, {
      horizon,
      seasonLength,
      factors,
      ...(this.#options.coverage === undefined ? {} : { coverage: this.#options.coverage }),
    });
    const points: ForecastPoint[] = forecast.mean.map((value, h) => ({
      at: current + h * bucketMs,
      value,
      lower: forecast.lower[h]!,
      upper: forecast.upper[h]!,
    }));
    // Per-type series inside an event with a mix: the total forecast × the event's share.
    if (key.kind !== "expert" && key.requestType !== undefined) {
      const mixes = points.map((p) => eventMixAt(events, p.at + bucketMs / 2, key.model));
      if (mixes.some((mix) => mix !== undefined)) {
        const total = await this.forecast({ kind: key.kind, model: key.model }, horizon);
        points.forEach((point, h) => {
          const share = mixes[h]?.[key.requestType!];
          if (mixes[h] === undefined || total === null) return;
          const totalPoint = total.points[h]!;
          point.value = totalPoint.value * (share ?? 0);
          point.lower = totalPoint.lower * (share ?? 0);
          point.upper = totalPoint.upper * (share ?? 0);
        });
      }
    }
    const end = current + horizon * bucketMs;
    return {
      series: formatSeriesKey(key),
      model: forecast.model,
      bucketMs,
      seasonLength,
      historyBuckets: history.length,
      points,
      backtest: forecast.backtest,
      events: events.filter((e) => e.startMs < end && e.endMs > current),
    };
  }
}
