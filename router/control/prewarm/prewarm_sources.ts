/**
 * @module Adapts the traffic series (`router/control/traffic/`) and the forecasters
 * (`router/control/forecast/`) to the pre-warm job's {@linkcode TrafficSource}.
 *
 * - Volume: the `tokens:<model>` series over the last `historyMs`, forecast `horizon`
 *   buckets ahead by the forecaster the rolling-origin backtest selects (lowest MASE among
 *   models backtested at ≥ 3 origins, else last value; re-selected at most every
 *   `reselectMs`, and at every run while the history is shorter than a season), converted
 *   to tokens/s. Events are not in it:
 *   the job applies them, so the traffic of the events it passes (running ones included)
 *   is divided out of the history first (`event_baseline.ts`). **Only settled buckets**: a bucket counts once it closed at
 *   least `settleMs` (default 5 s, longer than the recorder's 1 s flush) before `now`.
 *   The job runs on the minute, the moment the last bucket closes and before its final
 *   flush: reading that bucket gave "last value" forecasts of 0 with traffic flowing.
 * - **Then the buckets in progress** (`partial_bucket.ts`, on unless `partialBucket` is
 *   false): each unsettled bucket up to `now` that the store surely holds part of (up to
 *   `now − partialLagMs`) is appended to the series as its partial tokens blended with
 *   the one-step forecast by the fraction it covers, and is a forecast point itself; the
 *   horizon is forecast after them. On the minute that is the bucket that just closed
 *   (58 of 60 s covered); mid-bucket also the one in progress.
 * - Observed volume of one bucket (the job's prediction check).
 * - Mix: request shares of the last `mixWindowMs`.
 * - Affinity: expert selections per request type over the last day, plus `"*"`, the sum
 *   over types (the profile of all traffic).
 */
import { backtest, selectModel } from "../forecast/backtest.ts";
import type { Forecaster } from "../forecast/forecaster.ts";
import { FORECASTERS } from "../forecast/forecasters.ts";
import type { TrafficStore } from "../traffic/traffic_store.ts";
import { OPEN_BUCKET_FLUSH_MS } from "../traffic/traffic_recorder.ts";
import { eventFactor, withoutEvents } from "./event_baseline.ts";
import { blendPartial, coveredFraction } from "./partial_bucket.ts";
import type {
  ExpertAffinity,
  PrewarmEvent,
  TrafficSource,
  VolumeForecast,
} from "./prewarm_types.ts";

/** Options of {@linkcode storeTrafficSource}. */
export interface StoreTrafficSourceOptions {
  /** The served model's name, or null before it is known. */
  model: () => string | null;
  /** History the forecast fits on (ms); default 3 days. */
  historyMs?: number;
  /** Window of the observed mix (ms); default 15 minutes. */
  mixWindowMs?: number;
  /** Time between backtest selections (ms); default 1 hour. */
  reselectMs?: number;
  /** Candidates; default every forecaster. */
  forecasters?: readonly Forecaster[];
  /** A bucket is read only this long (ms) after it closed; default 5000. */
  settleMs?: number;
  /** Blend the buckets in progress into the forecast (see the module doc); default true. */
  partialBucket?: boolean;
  /** The store surely holds traffic older than this (ms); default the router's open-bucket flush. */
  partialLagMs?: number;
}

/** A {@linkcode TrafficSource} over the KV traffic series; see the module doc. */
export function storeTrafficSource(
  store: TrafficStore,
  options: StoreTrafficSourceOptions,
): TrafficSource {
  const bucketMs = store.bucketMs;
  const historyMs = options.historyMs ?? 3 * 86_400_000;
  const mixWindowMs = options.mixWindowMs ?? 15 * 60_000;
  const reselectMs = options.reselectMs ?? 3_600_000;
  const candidates = options.forecasters ?? FORECASTERS;
  const settleMs = options.settleMs ?? 5_000;
  const partialLagMs = options.partialLagMs ?? OPEN_BUCKET_FLUSH_MS;
  const seasonLength = Math.max(1, Math.round(86_400_000 / bucketMs));
  let chosen: { forecaster: Forecaster; at: number; horizon: number } | undefined;

  return {
    async forecastVolume(
      now: number,
      horizonMs: number,
      events: readonly PrewarmEvent[] = [],
    ): Promise<VolumeForecast | null> {
      const model = options.model();
      if (model === null) return null;
      // Only settled buckets: closed at least settleMs ago (the last flush is in).
      const end = store.bucketStart(now - settleMs);
      const history = await store.values({ kind: "tokens", model }, end - historyMs, end);
      const first = history.findIndex((v) => v > 0);
      if (first < 0) return null;
      // The series ends at `end` (bucket-aligned), whatever retention cut from its start.
      const firstStart = end - (history.length - first) * bucketMs;
      const series = withoutEvents(history.slice(first), firstStart, bucketMs, events);
      const horizon = Math.max(1, Math.ceil(horizonMs / bucketMs));
      const usable = candidates.filter((f) => f.minHistory({ seasonLength }) <= series.length);
      if (usable.length === 0) return null;
      // A history shorter than a season changes character within minutes (bursts, then
      // steady traffic): re-selected every run while it is, and cheap to backtest.
      if (
        chosen === undefined || now - chosen.at >= reselectMs || chosen.horizon !== horizon ||
        !usable.includes(chosen.forecaster) || series.length < seasonLength
      ) {
        const results = backtest(usable, series, { seasonLength, horizon });
        const best = selectModel(results);
        const forecaster = usable.find((f) => f.name === best?.name) ?? usable[0]!;
        chosen = { forecaster, at: now, horizon };
      }
      const forecaster = chosen.forecaster;
      // The buckets in progress, blended with the one-step forecast by what they cover.
      const extended = [...series];
      const partial = options.partialBucket === false ? [] : await partialBuckets(store, extended, {
        model,
        from: end,
        now,
        partialLagMs,
        events,
        forecast: (values) => forecaster.forecast(values, 1, { seasonLength }).mean[0] ?? 0,
      });
      const { mean } = forecaster.forecast(extended, horizon, { seasonLength });
      return {
        bucketMs,
        model: forecaster.name,
        points: volumePoints(bucketMs, end, partial, mean),
      };
    },
    async observedMix(now: number): Promise<Record<string, number> | null> {
      const model = options.model();
      if (model === null) return null;
      const mix = await store.requestTypeMix(model, now - mixWindowMs, now);
      return Object.keys(mix).length === 0 ? null : mix;
    },
    async observedTokensPerS(model: string, fromMs: number, toMs: number) {
      if (store.bucketStart(fromMs) !== fromMs || toMs - fromMs !== bucketMs) return null;
      const [tokens] = await store.values({ kind: "tokens", model }, fromMs, toMs);
      return tokens === undefined ? null : tokens / (bucketMs / 1000);
    },
    async affinity(model: string, now: number): Promise<ExpertAffinity | null> {
      const counts = await store.affinity(model, now - 86_400_000, now + bucketMs);
      if (Object.keys(counts).length === 0) return null;
      return { ...counts, "*": sumOverTypes(counts) };
    },
  };
}

/**
 * The buckets in progress from `from` up to `now` that the store surely holds part of,
 * each blended with the one-step `forecast` by the fraction it covers (events divided out)
 * and appended to `series`; returns them with their end times.
 */
async function partialBuckets(
  store: TrafficStore,
  series: number[],
  at: {
    model: string;
    from: number;
    now: number;
    partialLagMs: number;
    events: readonly PrewarmEvent[];
    forecast: (series: readonly number[]) => number;
  },
): Promise<{ at: number; tokens: number }[]> {
  const { model, now, events } = at;
  const bucketMs = store.bucketMs;
  const partial: { at: number; tokens: number }[] = [];
  for (let start = at.from; start <= store.bucketStart(now); start += bucketMs) {
    const f = coveredFraction(start, bucketMs, now, at.partialLagMs);
    if (f <= 0) break;
    const [tokens] = await store.values({ kind: "tokens", model }, start, start + bucketMs);
    const next = at.forecast(series);
    const baseline = (tokens ?? 0) / eventFactor(start, bucketMs, events);
    const blended = blendPartial(baseline, f, next);
    series.push(blended);
    partial.push({ at: start + bucketMs, tokens: blended });
  }
  return partial;
}

/** Tokens/s points: the partial buckets, then the forecast `mean` after them. */
function volumePoints(
  bucketMs: number,
  end: number,
  partial: readonly { at: number; tokens: number }[],
  mean: readonly number[],
): VolumeForecast["points"] {
  const last = end + partial.length * bucketMs;
  return [
    ...partial.map((p) => ({ at: p.at, tokensPerS: p.tokens / (bucketMs / 1000) })),
    ...mean.map((tokens, h) => ({
      at: last + (h + 1) * bucketMs,
      tokensPerS: Math.max(0, tokens) / (bucketMs / 1000),
    })),
  ];
}

/** `[layer][expert]` selections summed over request types (the profile of all traffic). */
function sumOverTypes(counts: Record<string, number[][]>): number[][] {
  const all: number[][] = [];
  for (const layers of Object.values(counts)) {
    layers.forEach((row, l) => {
      const into = all[l] ??= [];
      row.forEach((v, e) => into[e] = (into[e] ?? 0) + v);
    });
  }
  return all.map((row) => Array.from(row, (v) => v ?? 0));
}
