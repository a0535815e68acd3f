/**
 * @module The JSON body of `GET /api/load` (read-only): the pool aggregate in the
 * router's snake_case API style, rates rounded to 0.001.
 */
import type { PoolLoad } from "./pool_load.ts";

/** What the `/api/load` endpoint reads. */
export interface LoadSource {
  /** The pool's load now. */
  snapshot(): PoolLoad;
  /** EWMA of a layer's expert tokens/s, when history is kept. */
  ewma?(model: string, layer: number): readonly number[] | undefined;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function roundOrNull(value: number | undefined): number | null {
  return value === undefined ? null : round(value);
}

/** The `/api/load` body for `load`. */
export function loadApiBody(load: PoolLoad, source: Pick<LoadSource, "ewma"> = {}) {
  return {
    at: load.at,
    pool: {
      backends_reporting: load.pool.reporting,
      balancedness: round(load.pool.balancedness),
      cv: round(load.pool.cv),
      tokens_s_balancedness: round(load.pool.tokensBalancedness),
    },
    backends: load.backends.map((backend) => ({
      id: backend.id,
      name: backend.name,
      model: backend.model ?? null,
      stale: backend.stale,
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
    })),
    models: load.models.map(({ model, layers }) => ({
      model,
      layers: layers.map((layer) => ({
        layer: layer.layer,
        expert_tokens_s: layer.expertTokensPerS.map(round),
        balancedness: round(layer.balancedness),
        cv: round(layer.cv),
        ewma_tokens_s: source.ewma?.(model, layer.layer)?.map(round) ?? null,
      })),
    })),
  };
}

/** The `/api/load` body type. */
export type LoadApiBody = ReturnType<typeof loadApiBody>;
