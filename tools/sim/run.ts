/**
 * @module One scale × scenario: builds the workload once (the production gate routes the
 * synthetic tokens), then simulates the day under each placement policy with the
 * DEFAULT Switchyard configuration (`resolveConfig()` with no file and no env).
 */
import { resolveConfig } from "../../shared/config.ts";
import { type PlacementPolicy, type SimOptions, type SimResult, simulate } from "./engine.ts";
import { slotsPerBackend } from "../../router/control/balancer/plan_math.ts";
import { assumed, type Param } from "./params.ts";
import { peakRate, type Scale } from "./scales.ts";
import { type AffinityTable, buildAffinity, type DayScenario, SIM_TYPES } from "./workload.ts";

/** The router's load round (`router/wire/server.ts`: `loadIntervalMs` default), day-time ms. */
export const LOAD_ROUND_MS = 1000;

/** Knobs of the comparison that are not Switchyard config (all assumed). */
export const COMPARISON = {
  eplbEveryMin: assumed(10, "day-minutes", 'DeepSeek: re-placement "every 10 minutes"'),
  sglangEverySteps: assumed(1000, "steps", "SGLang: rebalance every 1,000 iterations"),
  zipf: assumed(1.0, "Zipf exponent", "expert popularity within a request type"),
  driftEpochs: assumed(9, "epochs/day", "popularity drift: ranking re-drawn in part every 3 h"),
  driftSwap: assumed(0.1, "of experts swapped per epoch", "slow drift"),
  gateTokens: assumed(128, "tokens", "sampled per type, epoch and layer for the affinity"),
  queueLimit: assumed(1024, "requests", "admission queue bound; beyond it arrivals are shed"),
  tightMemory: assumed(1.05, "× hosted experts", "memory-tight variant: 5 % spare"),
  tunedThreshold: assumed(
    0.95,
    "pool balancedness",
    "switchyard-tuned only: a TUNED threshold, not the default",
  ),
} as const;

/** Options of {@linkcode runComparison}. */
export interface ComparisonOptions {
  scale: Scale;
  scenario: DayScenario;
  policies: readonly PlacementPolicy[];
  seed: number;
  /** Virtual seconds of the day (default the scale's). */
  dayS?: number;
  memory: "ample" | "tight";
  /** Balancer settings replacing the defaults (the labelled tuned variant). */
  balancerOverride?: Partial<SimOptions["balancer"]>;
  /** Prebuilt affinity (shared across scenarios of one scale). */
  affinity?: AffinityTable;
  /** Keep every balancer evaluation (`SimResult.trace`). */
  trace?: boolean;
  /** Load rounds as the compressed day samples them (no 1/√C scaling). */
  rawDetection?: boolean;
}

/** The affinity table of a scale (the expensive part: gate routing of sampled tokens). */
export function affinityFor(scale: Scale, seed: number): AffinityTable {
  return buildAffinity(scale.shape, {
    seed,
    types: SIM_TYPES,
    zipf: COMPARISON.zipf.value,
    epochs: COMPARISON.driftEpochs.value,
    driftSwap: COMPARISON.driftSwap.value,
    gateTokens: COMPARISON.gateTokens.value,
    stormTypes: ["storm"],
    stormExperts: 4,
    stormShare: 0.5,
  });
}

/** The simulator options of one policy on one scale and scenario. */
export function simOptions(
  options: ComparisonOptions,
  policy: PlacementPolicy,
  affinity: AffinityTable,
): SimOptions {
  const config = resolveConfig();
  const { scale } = options;
  const redundancy = scale.redundancy ?? config.expert_balancer.redundancy;
  const hostedPerDevice = slotsPerBackend(scale.shape.experts, scale.devices, redundancy) *
    scale.shape.layers;
  return {
    seed: options.seed,
    devices: scale.devices,
    shape: scale.shape,
    device: scale.device,
    ...(options.memory === "tight"
      ? { memoryExperts: Math.ceil(hostedPerDevice * COMPARISON.tightMemory.value) }
      : {}),
    types: SIM_TYPES,
    affinity,
    scenario: options.scenario,
    policy,
    dayS: options.dayS ?? scale.dayS,
    peakRatePerS: peakRate(scale).value,
    rowsMin: scale.rowsMin,
    rowsMax: scale.rowsMax,
    sloMs: scale.sloMs.value,
    queueLimit: COMPARISON.queueLimit.value,
    batching: {
      min: config.batching.min,
      max: scale.batchMax,
      maxWaitMs: config.batching.max_wait_ms,
      latencyBudgetMs: config.batching.latency_budget_ms,
    },
    routing: config.router.policy,
    balancer: {
      threshold: config.expert_balancer.threshold,
      adjustIntervalMs: config.expert_balancer.adjust_interval,
      windowMs: config.expert_balancer.window,
      redundancy,
      evaluateIntervalMs: config.expert_balancer.evaluate_interval,
      detectWindowMs: config.expert_balancer.detect_window,
      switchGain: config.expert_balancer.switch_gain,
      loadRoundMs: LOAD_ROUND_MS,
      ...(policy === "switchyard-tuned" ? { threshold: COMPARISON.tunedThreshold.value } : {}),
      ...options.balancerOverride,
    },
    prewarm: {
      horizonMs: config.prewarm.horizon,
      threshold: config.prewarm.threshold,
      leadTimeMs: config.prewarm.lead_time,
      maxBackends: config.prewarm.max_backends,
      everyMs: 60_000,
    },
    eplbEveryMs: COMPARISON.eplbEveryMin.value * 60_000,
    sglangEverySteps: COMPARISON.sglangEverySteps.value,
    overlap: scale.overlap,
    noise: true,
    detectSampling: options.rawDetection ? 1 : detectSampling(options.dayS ?? scale.dayS).value,
    measureSampling: detectSampling(options.dayS ?? scale.dayS).value,
    ...(options.trace ? { trace: true } : {}),
  };
}

/**
 * The balancer's detection window in a compressed day holds C× fewer requests than the
 * same day-time window of a real day at that rate: its type-mix sampling deviation is
 * scaled by 1/√C to match a real window's (variance ∝ 1 / requests).
 */
export function detectSampling(dayS: number): Param {
  const C = 86_400 / dayS;
  return {
    value: 1 / Math.sqrt(C),
    unit: "× sampled deviation",
    provenance: "derived",
    source: `detection window's type-mix noise as in a real day: 1/√C, C = ${C.toFixed(0)}`,
  };
}

/** Runs every policy of `options` on one scale and scenario. */
export async function runComparison(options: ComparisonOptions): Promise<SimResult[]> {
  const affinity = options.affinity ?? affinityFor(options.scale, options.seed);
  const results: SimResult[] = [];
  for (const policy of options.policies) {
    results.push(await simulate(simOptions(options, policy, affinity)));
  }
  return results;
}

/** The Switchyard defaults the simulator runs, as parameters (for the provenance block). */
export function defaultSettings(): Record<string, Param> {
  const config = resolveConfig();
  const cfg = (value: number, unit: string, key: string): Param => ({
    value,
    unit,
    provenance: "assumed",
    source: `Switchyard default config: ${key}`,
  });
  return {
    "balancer threshold": cfg(config.expert_balancer.threshold, "", "expert_balancer.threshold"),
    "balancer adjust interval": cfg(
      config.expert_balancer.adjust_interval / 1000,
      "day-s",
      "expert_balancer.adjust_interval",
    ),
    "balancer evaluate interval": cfg(
      config.expert_balancer.evaluate_interval / 1000,
      "day-s",
      "expert_balancer.evaluate_interval",
    ),
    "balancer detect window": cfg(
      config.expert_balancer.detect_window / 1000,
      "day-s",
      "expert_balancer.detect_window (EWMA of load rounds every 1 day-s)",
    ),
    "balancer switch gain": cfg(
      config.expert_balancer.switch_gain,
      "worst-layer gain",
      "expert_balancer.switch_gain",
    ),
    "balancer window": cfg(config.expert_balancer.window / 1000, "day-s", "expert_balancer.window"),
    "balancer redundancy": cfg(
      config.expert_balancer.redundancy,
      "",
      "expert_balancer.redundancy",
    ),
    "batching max wait": cfg(config.batching.max_wait_ms, "ms", "batching.max_wait_ms"),
    "batching latency budget": cfg(
      config.batching.latency_budget_ms,
      "ms",
      "batching.latency_budget_ms",
    ),
    "prewarm horizon": cfg(config.prewarm.horizon / 60_000, "day-min", "prewarm.horizon"),
    "prewarm lead time": cfg(config.prewarm.lead_time / 60_000, "day-min", "prewarm.lead_time"),
  };
}
