/**
 * @module What the alert rules compare with, resolved from config once.
 */
import type { Config } from "../../../shared/config.ts";

/**
 * A layer must carry at least this many routed tokens/s per expert (mean) before its
 * balancedness can alert: below it the spread is sampling noise, and an idle pool has
 * balancedness 1 anyway. With 32 experts that is 32 expert-tokens/s per layer, e.g.
 * 4 requests/s of 4 tokens at top-2.
 */
export const MIN_LAYER_TOKENS_S_PER_EXPERT = 1;

/**
 * A hot expert must also carry more than this multiple of its replicas' fair share of the
 * layer's load (replicas ÷ all replicas of the layer): a balanced, saturated pool is the
 * `saturation` alert's, not every expert's. Assumed.
 */
export const HOT_EXPERT_MIN_OVER_SHARE = 1.2;

/** Thresholds and hysteresis of the alert rules. */
export interface AlertSettings {
  /** `alerts.expert_load_threshold`: share of the pool's capacity for the expert. */
  expertLoadThreshold: number;
  /** `alerts.latency_p99_ms`; none: no latency alert. */
  latencyP99Ms?: number;
  /** `alerts.shed_ratio`; none: no shedding alert. */
  shedRatio?: number;
  /** `alerts.saturation`; none: no saturation alert. */
  saturation?: number;
  /** `expert_balancer.threshold`: balancedness below which a busy layer alerts. */
  balanceThreshold: number;
  /** `alerts.raise_after`: consecutive rounds a condition holds before it fires. */
  raiseAfter: number;
  /** `alerts.clear_after`: consecutive rounds it is gone before the alert resolves. */
  clearAfter: number;
  /** Default {@linkcode MIN_LAYER_TOKENS_S_PER_EXPERT}. */
  minLayerTokensPerSPerExpert?: number;
}

/** The alert settings of `config`. */
export function alertSettingsFromConfig(
  config: Pick<Config, "alerts" | "expert_balancer">,
): AlertSettings {
  return {
    expertLoadThreshold: config.alerts.expert_load_threshold,
    latencyP99Ms: config.alerts.latency_p99_ms,
    shedRatio: config.alerts.shed_ratio,
    saturation: config.alerts.saturation,
    balanceThreshold: config.expert_balancer.threshold,
    raiseAfter: config.alerts.raise_after,
    clearAfter: config.alerts.clear_after,
  };
}
