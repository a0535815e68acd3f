/**
 * @module The four analysis queries: each reads its range from KV (traffic store and
 * backend series), runs the pure computation and returns the JSON body in the API's
 * snake_case style. Times are ms since the Unix epoch; `buckets` are bucket starts.
 */
import type { TrafficStore } from "../../control/traffic/traffic_store.ts";
import { layerActivation } from "./activation.ts";
import type { BackendSeries } from "./backend_series.ts";
import {
  balanceOverTime,
  type BalanceStats,
  balanceStats,
  meanStats,
} from "./balance_over_time.ts";
import { correlate } from "./correlation.ts";
import { efficiency, type EfficiencySeries } from "./efficiency.ts";
import { readExpertVectors } from "./expert_vectors.ts";

/** What the queries read. */
export interface AnalysisSources {
  kv: Deno.Kv;
  traffic: TrafficStore;
  backends: BackendSeries;
}

/** A resolved query range. */
export interface AnalysisRange {
  fromMs: number;
  toMs: number;
}

/** Power note when no backend read its accelerator power. */
export const POWER_UNAVAILABLE = "unavailable (no nvidia-smi on the backends)";

/** Rounds to 6 decimals (shares and ratios), keeping `null`. */
export function r6<T extends number | null>(value: T): T {
  return (value === null ? null : Math.round(value * 1e6) / 1e6) as T;
}

/** Rounds to 3 decimals (tokens, rates, joules), keeping `null`. */
export function r3<T extends number | null>(value: T): T {
  return (value === null ? null : Math.round(value * 1e3) / 1e3) as T;
}

/** `GET /api/analysis/activation`. */
export async function activationBody(
  sources: AnalysisSources,
  model: string,
  range: AnalysisRange & { layer?: number | undefined; top: number },
) {
  const read = await readExpertVectors(sources.kv, sources.traffic, model, {
    ...range,
    ...(range.layer !== undefined ? { layers: [range.layer] } : {}),
  });
  return {
    model,
    from: range.fromMs,
    to: range.toMs,
    bucket_ms: sources.traffic.bucketMs,
    unit: "tokens",
    buckets: read.buckets,
    layers: read.layers.map((layer, i) => {
      const a = layerActivation(layer, read.vectors[i]!, {
        experts: read.experts[layer] ?? 0,
        top: range.top,
      });
      return {
        layer,
        experts: a.experts,
        total_tokens: a.totals.map(r3),
        expert_totals: a.expertTotals.map(r3),
        top: a.top.map((hot) => ({
          expert: hot.expert,
          total: r3(hot.total),
          share: r6(hot.share),
          series: hot.series.map(r3),
        })),
        series: a.series.map((values) => values.map(r3)),
      };
    }),
  };
}

/** `GET /api/analysis/correlation`. */
export async function correlationBody(
  sources: AnalysisSources,
  model: string,
  range: AnalysisRange,
) {
  const experts = (await sources.traffic.index(model))?.experts ?? [];
  const counts = await sources.traffic.affinity(model, range.fromMs, range.toMs);
  const types = correlate(counts, {
    layers: experts.length,
    experts: Math.max(0, ...experts),
  });
  return {
    model,
    from: range.fromMs,
    to: range.toMs,
    layers: experts.length,
    experts: Math.max(0, ...experts),
    request_types: types.map((type) => ({
      request_type: type.requestType,
      selections: type.selections,
      concentration: r6(type.concentration),
      layers: type.layers.map((layer) => ({
        layer: layer.layer,
        selections: layer.selections,
        concentration: r6(layer.concentration),
        top_expert: layer.topExpert,
        shares: layer.shares.map(r6),
      })),
    })),
  };
}

function seriesBody(series: EfficiencySeries) {
  return {
    tokens_s: series.tokensPerS.map(r3),
    utilisation: series.utilisation.map(r6),
    power_w: series.powerW.map(r3),
    tokens_per_joule: series.tokensPerJoule.map(r6),
    totals: {
      tokens: r3(series.totals.tokens),
      tokens_s: r3(series.totals.tokensPerS),
      utilisation: r6(series.totals.utilisation),
      energy_j: r3(series.totals.energyJ),
      tokens_per_joule: r6(series.totals.tokensPerJoule),
    },
  };
}

/** `GET /api/analysis/efficiency`. */
export async function efficiencyBody(sources: AnalysisSources, range: AnalysisRange) {
  const read = await sources.backends.read(range.fromMs, range.toMs);
  const result = efficiency(read.backends, read.buckets.length);
  const power = result.powerReadOn.length > 0
    ? `measured on ${
      result.powerReadOn.join(", ")
    } (${result.powerReadOn.length} of ${result.backends.length} backends)`
    : result.backends.length > 0
    ? POWER_UNAVAILABLE
    : "unavailable (no backend measured in this range)";
  return {
    from: range.fromMs,
    to: range.toMs,
    bucket_ms: sources.backends.bucketMs,
    buckets: read.buckets,
    power,
    tokens_per_joule: r6(result.pool.totals.tokensPerJoule),
    pool: seriesBody(result.pool),
    backends: result.backends.map(({ backend, series }) => ({ backend, ...seriesBody(series) })),
  };
}

function statsBody(stats: BalanceStats | null) {
  return {
    cv: r6(stats?.cv ?? null),
    top10_share: r6(stats?.top10Share ?? null),
  };
}

/** `GET /api/analysis/balance`. */
export async function balanceBody(sources: AnalysisSources, model: string, range: AnalysisRange) {
  const read = await readExpertVectors(sources.kv, sources.traffic, model, range);
  const padded = read.vectors.map((series, i) =>
    series.map((vector) => {
      const experts = read.experts[read.layers[i]!] ?? vector.length;
      return Array.from({ length: Math.max(experts, vector.length) }, (_, e) => vector[e] ?? 0);
    })
  );
  const perBucket = balanceOverTime(read.buckets, padded);
  // The whole range: balance of each layer's load summed over the buckets.
  const rangeLayers = padded.map((series, i) => {
    const sum: number[] = [];
    for (const vector of series) vector.forEach((v, e) => sum[e] = (sum[e] ?? 0) + v);
    return { layer: read.layers[i]!, stats: balanceStats(sum) };
  });
  return {
    model,
    from: range.fromMs,
    to: range.toMs,
    bucket_ms: sources.traffic.bucketMs,
    range: {
      ...statsBody(meanStats(rangeLayers.map((l) => l.stats))),
      layers: rangeLayers.map((l) => ({ layer: l.layer, ...statsBody(l.stats) })),
    },
    buckets: perBucket.map((bucket) => ({
      at: bucket.at,
      tokens: r3(bucket.tokens),
      ...statsBody(bucket.mean),
      layers: bucket.layers.map((layer) => ({
        layer: read.layers[layer.layer]!,
        tokens: r3(layer.tokens),
        ...statsBody(layer.stats),
      })),
    })),
  };
}
