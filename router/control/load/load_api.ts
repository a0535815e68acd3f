/**
 * @module The JSON body of `GET /api/load` (read-only): the pool aggregate in the
 * router's snake_case API style, rates rounded to 0.001.
 *
 * Node resources per backend: `cpu_cores` (cores busy on average), `net_rx_bytes_s` and
 * `net_tx_bytes_s` (body bytes/s), `accelerator` (`{utilisation, memory_used_bytes,
 * memory_total_bytes}` from `nvidia-smi`, or `null` where none is readable) and `power_w`
 * (or `null`); `residency` (`{budget_bytes, used_bytes, expert_bytes}`: routed-expert
 * memory budget, bytes warm now, largest routed expert) or `null`. `?detail=replicas` adds per backend `layers: [{layer, expert_tokens_s}]`,
 * the routed-expert tokens/s it served (0 for experts it does not host).
 *
 * The load signal (`saturation.ts`): per backend `saturation` — `{value, bottleneck,
 * device_busy, host_busy, queue_share, shed_share, queue_wait_ms, service_ms, shed_s}`
 * or `null` — and `capacity_tokens_s` (with `capacity_source`); for the pool
 * `saturation` (mean), `saturation_max`, `capacity_tokens_s_per_backend` and `scale`
 * (`{backends, recommended, direction, demand, reason}`).
 *
 * Spread (`backend_balance.ts`): `balancedness` (across backends) for the pool, per model
 * and per layer, with `worst_layer` (`{model, layer, balancedness}`) beside the pool and
 * model values; `expert_skew` (`{top10_share, cv}`, across experts) per layer; and the
 * pool's `utilisation_balancedness` and `utilisation_cv` (executor busy time).
 *
 * Cold starts per backend (`cold_start_window.ts`): `cold_starts`, routed experts loaded
 * on demand since the backend started, and `cold_starts_per_min` over the last minute
 * (`null` where the backend does not report them or fewer than two reports arrived).
 */
import type { AcceleratorReading } from "../../../shared/load_report.ts";
import type { WorstLayer } from "./backend_balance.ts";
import type { BackendLoad, PoolLoad } from "./pool_load.ts";
import type { ScaleAdvice } from "./saturation.ts";

/** What the `/api/load` endpoint reads. */
export interface LoadSource {
  /** The pool's load now. */
  snapshot(): PoolLoad;
  /** EWMA of a layer's expert tokens/s, when history is kept. */
  ewma?(model: string, layer: number): readonly number[] | undefined;
  /** The pool's health verdict per backend id (health checks, outlier detection). */
  health?(): ReadonlyMap<string, boolean>;
}

/**
 * A backend's state as the dashboard shows it: `down` (the pool took it out of rotation),
 * `stale` (no fresh load report: its last poll failed or is too old), else `fresh`.
 */
export function backendState(stale: boolean, healthy: boolean | undefined): string {
  return healthy === false ? "down" : stale ? "stale" : "fresh";
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function roundOrNull(value: number | null | undefined): number | null {
  return value === undefined || value === null ? null : round(value);
}

/** Extra sections of the body: `replicas` adds per-backend expert rates. */
export type LoadApiDetail = "replicas";

/** The `detail` query values {@linkcode loadApiBody} understands. */
export const LOAD_API_DETAILS: readonly LoadApiDetail[] = ["replicas"];

function acceleratorBody(reading: AcceleratorReading | null | undefined) {
  if (reading === undefined || reading === null) return null;
  return {
    utilisation: roundOrNull(reading.utilisation),
    memory_used_bytes: reading.memoryUsedBytes,
    memory_total_bytes: reading.memoryTotalBytes,
  };
}

function replicasBody(backend: BackendLoad) {
  return {
    layers: (backend.expertLayers ?? []).map((layer) => ({
      layer: layer.layer,
      expert_tokens_s: layer.expertTokensPerS.map(round),
    })),
  };
}

function saturationBody(backend: BackendLoad) {
  const s = backend.saturation;
  if (s === undefined) return null;
  return {
    value: round(s.value),
    bottleneck: s.bottleneck,
    device_busy: round(s.deviceBusy),
    host_busy: roundOrNull(s.hostBusy),
    queue_share: roundOrNull(s.queueShare),
    shed_share: round(s.shedShare),
    queue_wait_ms: roundOrNull(backend.queueWaitMs),
    service_ms: roundOrNull(backend.serviceMs),
    shed_s: roundOrNull(backend.shedPerS),
  };
}

function scaleBody(scale: ScaleAdvice | undefined) {
  if (scale === undefined) return null;
  return {
    backends: scale.backends,
    recommended: scale.recommended,
    direction: scale.direction,
    demand: round(scale.demand),
    reason: scale.reason,
  };
}

/** The worst layer's body: `{model, layer, balancedness}`, or null without layers. */
function worstLayerBody(worst: WorstLayer | null | undefined) {
  return worst
    ? { model: worst.model, layer: worst.layer, balancedness: round(worst.balancedness) }
    : null;
}

/** Whether a layer carried routed-expert load: balancedness of nothing is no data, not 1. */
function worked(layer: { expertTokensPerS: readonly number[] }): boolean {
  return layer.expertTokensPerS.some((rate) => rate > 0);
}

/** The `/api/load` body for `load`; `detail` adds optional sections. */
export function loadApiBody(
  load: PoolLoad,
  source: Pick<LoadSource, "ewma" | "health"> = {},
  detail?: LoadApiDetail,
) {
  const health = source.health?.();
  // No routed-expert load measured, or a spread over one backend of several (the others
  // not reporting): balancedness is unknown (null, "n/a"), never 1.
  const spread = load.backends.length <= 1 || load.pool.reporting >= 2;
  const measured = spread && load.models.some((m) => m.layers.some(worked));
  return {
    at: load.at,
    pool: {
      backends_reporting: load.pool.reporting,
      balancedness: measured ? round(load.pool.balancedness) : null,
      worst_layer: measured ? worstLayerBody(load.pool.worstLayer) : null,
      utilisation_balancedness: round(load.pool.utilisationBalancedness),
      utilisation_cv: round(load.pool.utilisationCv),
      saturation: roundOrNull(load.pool.saturation),
      saturation_max: roundOrNull(load.pool.saturationMax),
      capacity_tokens_s_per_backend: roundOrNull(load.pool.capacityPerBackend),
      scale: scaleBody(load.pool.scale),
      router_shed_s: roundOrNull(load.pool.routerShedPerS),
    },
    backends: load.backends.map((backend) => ({
      id: backend.id,
      name: backend.name,
      model: backend.model ?? null,
      stale: backend.stale,
      healthy: health?.get(backend.id) ?? null,
      state: backendState(backend.stale, health?.get(backend.id)),
      error: backend.error ?? null,
      report_age_ms: backend.reportAgeMs ?? null,
      utilisation: roundOrNull(backend.utilisation),
      tokens_s: roundOrNull(backend.tokensPerS),
      requests_s: roundOrNull(backend.requestsPerS),
      in_flight: backend.inFlight ?? null,
      in_flight_rows: backend.inFlightRows ?? null,
      queue_depth: backend.queueDepth ?? null,
      slots: backend.slots ?? null,
      execution_provider: backend.executionProvider ?? null,
      rss_bytes: backend.memory?.rssBytes ?? null,
      heap_used_bytes: backend.memory?.heapUsedBytes ?? null,
      cpu_cores: roundOrNull(backend.cpuCores),
      net_rx_bytes_s: roundOrNull(backend.netRxBytesPerS),
      net_tx_bytes_s: roundOrNull(backend.netTxBytesPerS),
      accelerator: acceleratorBody(backend.accelerator),
      power_w: roundOrNull(backend.powerW),
      saturation: saturationBody(backend),
      capacity_tokens_s: roundOrNull(backend.capacity?.tokensPerS),
      cold_starts: backend.coldStarts ?? null,
      cold_starts_per_min: roundOrNull(backend.coldStartsPerMin),
      capacity_source: backend.capacity?.source ?? null,
      residency: backend.residency
        ? {
          budget_bytes: backend.residency.budgetBytes,
          used_bytes: backend.residency.usedBytes,
          expert_bytes: backend.residency.expertBytes,
        }
        : null,
      ...(detail === "replicas" ? replicasBody(backend) : {}),
    })),
    models: load.models.map(({ model, layers, balancedness, worstLayer }) => ({
      model,
      balancedness: spread && layers.some(worked) ? roundOrNull(balancedness) : null,
      worst_layer: spread && layers.some(worked) ? worstLayerBody(worstLayer) : null,
      layers: layers.map((layer) => ({
        layer: layer.layer,
        expert_tokens_s: layer.expertTokensPerS.map(round),
        balancedness: spread && worked(layer) ? round(layer.balancedness) : null,
        expert_skew: {
          top10_share: round(layer.expertSkew.top10Share),
          cv: round(layer.expertSkew.cv),
        },
        ewma_tokens_s: source.ewma?.(model, layer.layer)?.map(round) ?? null,
      })),
    })),
  };
}

/** The `/api/load` body type. */
export type LoadApiBody = ReturnType<typeof loadApiBody>;
