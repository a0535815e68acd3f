/**
 * @module A pre-warm traffic source over an in-memory series (tokens per bucket, oldest
 * first), forecast the way the job's own KV source does it (`prewarm_sources.ts`): the known
 * events' traffic divided out of the history, then the production forecaster the
 * rolling-origin backtest selects (≥ 3 origins), re-selected every `reselectMs`. For the
 * simulators and backtests, which replay days in seconds.
 */
import { backtest, selectModel } from "../../router/control/forecast/backtest.ts";
import type { Forecaster } from "../../router/control/forecast/forecaster.ts";
import { FORECASTERS } from "../../router/control/forecast/forecasters.ts";
import { withoutEvents } from "../../router/control/prewarm/event_baseline.ts";
import type { TrafficSource } from "../../router/control/prewarm/prewarm_types.ts";

/** Options of {@linkcode arrayTraffic}. */
export interface ArrayTrafficOptions {
  /** Bucket width (ms); default one minute. */
  bucketMs?: number;
  /** History the forecast fits on, in days; default 2. */
  historyDays?: number;
  mix: () => Record<string, number>;
  affinity: Record<string, number[][]>;
  /** Re-selection interval of the forecaster (ms); default an hour, as the job's source. */
  reselectMs?: number;
}

/** The source; `series()` is read at every call (it grows as the replay goes). */
export function arrayTraffic(
  series: () => readonly number[],
  startMs: number,
  options: ArrayTrafficOptions,
): TrafficSource {
  const bucketMs = options.bucketMs ?? 60_000;
  const seasonLength = Math.round(86_400_000 / bucketMs);
  const keep = (options.historyDays ?? 2) * seasonLength;
  let chosen: { forecaster: Forecaster; at: number } | undefined;
  return {
    forecastVolume(at, horizonMs, events = []) {
      const all = series();
      const settled = Math.min(all.length, Math.floor((at - startMs) / bucketMs));
      const from = Math.max(0, settled - keep);
      const history = withoutEvents(
        all.slice(from, settled),
        startMs + from * bucketMs,
        bucketMs,
        events,
      );
      if (history.length === 0) return Promise.resolve(null);
      const horizon = Math.max(1, Math.ceil(horizonMs / bucketMs));
      const usable = FORECASTERS.filter((f) => f.minHistory({ seasonLength }) <= history.length);
      if (
        chosen === undefined || at - chosen.at >= (options.reselectMs ?? 3_600_000) ||
        !usable.includes(chosen.forecaster)
      ) {
        const best = selectModel(backtest(usable, history, { seasonLength, horizon }));
        chosen = { forecaster: usable.find((f) => f.name === best?.name) ?? usable[0]!, at };
      }
      const { mean } = chosen.forecaster.forecast(history, horizon, { seasonLength });
      const last = startMs + settled * bucketMs;
      return Promise.resolve({
        bucketMs,
        model: chosen.forecaster.name,
        points: mean.map((v, h) => ({
          at: last + (h + 1) * bucketMs,
          tokensPerS: Math.max(0, v) / (bucketMs / 1000),
        })),
      });
    },
    observedMix: () => Promise.resolve(options.mix()),
    affinity: () => Promise.resolve(options.affinity),
  };
}
