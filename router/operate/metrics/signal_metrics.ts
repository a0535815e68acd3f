/**
 * @module Router metrics of the load signal (`router/control/load/saturation.ts`) and of the
 * pre-warm job's forecast accuracy, read at scrape time. The `*Samples` functions are
 * pure; {@linkcode signalMetrics} registers them.
 */
import type { Registry } from "prom-client";
import type { PoolLoad } from "../../control/load/pool_load.ts";
import { collectedGauge, type Sample } from "../../../shared/metrics/collected.ts";

/** The pre-warm job's accuracy as the metrics read it (`PrewarmJob.accuracy()` fits). */
export interface PrewarmAccuracySource {
  accuracy(): {
    checked: number;
    mape: number | null;
    last: { predictedTokensPerS: number; observedTokensPerS: number | null } | null;
  };
}

/** Per fresh backend: its saturation, one sample per backend labelled with its bottleneck. */
export function backendSaturationSamples(load: PoolLoad): Sample<"backend" | "bottleneck">[] {
  return load.backends.flatMap((b) =>
    b.stale || b.saturation === undefined ? [] : [{
      labels: { backend: b.name, bottleneck: b.saturation.bottleneck },
      value: b.saturation.value,
    }]
  );
}

/** Per fresh backend: its capacity estimate (tokens/s). */
export function backendCapacitySamples(load: PoolLoad): Sample<"backend">[] {
  return load.backends.flatMap((b) =>
    b.stale || b.capacity === undefined
      ? []
      : [{ labels: { backend: b.name }, value: b.capacity.tokensPerS }]
  );
}

/** Registers the load-signal and pre-warm accuracy gauges. */
export function signalMetrics(
  registry: Registry,
  options: { load: () => PoolLoad; prewarm?: PrewarmAccuracySource | undefined },
): void {
  const { load } = options;
  const one = (value: number | undefined | null) =>
    value === undefined || value === null ? [] : [{ labels: {}, value }];
  collectedGauge(registry, {
    name: "switchyard_pool_saturation",
    help:
      "Mean saturation of fresh backends: max(device busy, host busy, queue share), ≥ 0.9 while shedding.",
    read: () => one(load().pool.saturation),
  });
  collectedGauge(registry, {
    name: "switchyard_backend_saturation",
    help: "A backend's saturation (0–1); bottleneck: device, host, queue or shedding.",
    labelNames: ["backend", "bottleneck"],
    read: () => backendSaturationSamples(load()),
  });
  collectedGauge(registry, {
    name: "switchyard_backend_capacity_tokens_per_second",
    help: "Tokens/s a backend can serve: measured at saturation, else tokens/s ÷ saturation.",
    labelNames: ["backend"],
    read: () => backendCapacitySamples(load()),
  });
  collectedGauge(registry, {
    name: "switchyard_scale_recommended_backends",
    help: "Backends the scaling advice recommends from the load signal.",
    read: () => one(load().pool.scale?.recommended),
  });
  const prewarm = options.prewarm;
  if (prewarm === undefined) return;
  collectedGauge(registry, {
    name: "switchyard_prewarm_prediction_mape",
    help: "Mean absolute percentage error of the pre-warm job's checked bucket predictions.",
    read: () => one(prewarm.accuracy().mape),
  });
  collectedGauge(registry, {
    name: "switchyard_prewarm_predicted_tokens_per_second",
    help: "Tokens/s the pre-warm job predicted for its last checked bucket.",
    read: () => one(prewarm.accuracy().last?.predictedTokensPerS),
  });
  collectedGauge(registry, {
    name: "switchyard_prewarm_observed_tokens_per_second",
    help: "Tokens/s that bucket was later observed to carry.",
    read: () => one(prewarm.accuracy().last?.observedTokensPerS),
  });
}
