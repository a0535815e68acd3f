/**
 * @module The before/after's configurations, pure. They differ ONLY in placement: every
 * one runs on the same pool (backends, memory budget, executor, model), with the same
 * entry routing and batching — the defaults of `resolveConfig()` — and each adds only
 * settings of what moves experts: `SWITCHYARD_EXPERT_BALANCER__*`, and for the baselines
 * `SWITCHYARD_PREWARM__ENABLED=false` — the pre-warm job applies planned placements
 * (`balancer.apply`, trigger "prewarm") whatever the strategy, so with it on a "static"
 * pool was re-placed and then restored mid-run (a test holds them to these keys).
 *
 * - `static`: contiguous expert blocks, spare slots round-robin, never moved (the baseline);
 * - `eplb-10min`: DeepSeek's greedy EPLB (`eplb_greedy.ts`) re-planned by the benchmark
 *   every 10 minutes of load through the admin API, on that window's expert load
 *   (`eplb_driver.ts`); the router's own balancer never triggers (threshold 1e-6: no layer
 *   is ever that unbalanced), so it neither re-plans nor restores the static blocks —
 *   a static strategy would, between an unpin and an apply, and a pin queued behind a
 *   balancer tick comes too late;
 * - `switchyard`: the default configuration, nothing set;
 * - `replicate-all`: every backend hosts every expert (`strategy: off`) — only where every
 *   expert fits on every backend (the demo-model check).
 */
import { resolveConfig } from "../../../shared/config.ts";

/** `eplb-10min`'s balancer threshold: below any real layer's balancedness, so it never fires. */
export const EPLB_THRESHOLD = 1e-6;

/**
 * Expert parallelism for the static and EPLB baselines: with `placement: auto` the first
 * plan is full replication wherever the cost model prefers it and everything fits (the
 * demo model), whatever the strategy.
 */
const EXPERT_PARALLEL = { SWITCHYARD_EXPERT_BALANCER__PLACEMENT: "expert_parallel" };

/** The baselines' pre-warm job off: it applies placements whatever the strategy. */
const NO_PREWARM = { SWITCHYARD_PREWARM__ENABLED: "false" };

/** The configurations a run can compare. */
export const PLACEMENTS = ["static", "eplb-10min", "switchyard", "replicate-all"] as const;

/** One of {@linkcode PLACEMENTS}. */
export type PlacementName = typeof PLACEMENTS[number];

/** One configuration: how it places experts, and the settings that make it so. */
export interface PlacementConfig {
  name: PlacementName;
  /** How it places experts, for the reader. */
  placement: string;
  /** Settings on top of the pool's: only what moves experts (balancer, pre-warm job). */
  env: Record<string, string>;
  /** Whether the benchmark re-plans it with greedy EPLB every 10 minutes of load. */
  eplb: boolean;
}

/** The pool every configuration of one executor runs on. */
export interface PoolSettings {
  backends: number;
  /** `backend.memory_budget_mb`; null: unlimited. */
  budgetMb: number | null;
  /** `expert_balancer.redundancy`; null: the default. */
  redundancy: number | null;
  /** Simulated device time (measured), or null for the real onnxruntime executor. */
  simulated: {
    fixedMs: number;
    perExpertMs: number;
    perRowMs: number;
    loadFixedMs: number;
    loadMsPerMb: number;
  } | null;
  adminToken: string;
}

/** The settings every configuration shares: pool size, budget, redundancy, executor. */
export function poolEnv(settings: PoolSettings): Record<string, string> {
  return {
    SWITCHYARD_AUTH__ADMIN_TOKEN: settings.adminToken,
    ...(settings.budgetMb === null
      ? {}
      : { SWITCHYARD_BACKEND__MEMORY_BUDGET_MB: String(settings.budgetMb) }),
    ...(settings.redundancy === null
      ? {}
      : { SWITCHYARD_EXPERT_BALANCER__REDUNDANCY: String(settings.redundancy) }),
    ...(settings.simulated === null ? {} : {
      SWITCHYARD_BACKEND__EXECUTOR: "simulated",
      SWITCHYARD_BACKEND__SIMULATED__FIXED_MS: String(settings.simulated.fixedMs),
      SWITCHYARD_BACKEND__SIMULATED__PER_EXPERT_MS: String(settings.simulated.perExpertMs),
      SWITCHYARD_BACKEND__SIMULATED__PER_ROW_MS: String(settings.simulated.perRowMs),
      SWITCHYARD_BACKEND__SIMULATED__LOAD_FIXED_MS: String(settings.simulated.loadFixedMs),
      SWITCHYARD_BACKEND__SIMULATED__LOAD_MS_PER_MB: String(settings.simulated.loadMsPerMb),
    }),
  };
}

/** The configurations named, in that order; a RangeError names an unknown one. */
export function placementConfigs(names: readonly string[]): PlacementConfig[] {
  const balancer = resolveConfig().expert_balancer;
  const all: Record<PlacementName, Omit<PlacementConfig, "name">> = {
    static: {
      placement: "contiguous expert blocks (spare slots round-robin), never moved " +
        "(placement expert_parallel: the first plan is never full replication; pre-warm " +
        "job off: it would re-place)",
      env: { SWITCHYARD_EXPERT_BALANCER__STRATEGY: "static", ...EXPERT_PARALLEL, ...NO_PREWARM },
      eplb: false,
    },
    "eplb-10min": {
      placement: "greedy EPLB (DeepSeek eplb.py) on the last 10 minutes' expert load, " +
        "applied by the benchmark every 10 minutes of load through the admin API; starts " +
        "from the static blocks, the router's own balancer never triggers (threshold 1e-6), " +
        "pre-warm job off",
      env: {
        SWITCHYARD_EXPERT_BALANCER__THRESHOLD: String(EPLB_THRESHOLD),
        ...EXPERT_PARALLEL,
        ...NO_PREWARM,
      },
      eplb: true,
    },
    switchyard: {
      placement: `the default balancer: ${balancer.strategy}, threshold ${balancer.threshold}, ` +
        `evaluated every ${balancer.evaluate_interval / 1000} s on a ` +
        `${balancer.detect_window / 1000} s window, at most one switch per ` +
        `${balancer.adjust_interval / 1000} s unless the worst layer gains ` +
        `${balancer.switch_gain}`,
      env: {},
      eplb: false,
    },
    "replicate-all": {
      placement: "every backend hosts every expert (strategy off): no row crosses backends " +
        "(pre-warm job off)",
      env: { SWITCHYARD_EXPERT_BALANCER__STRATEGY: "off", ...NO_PREWARM },
      eplb: false,
    },
  };
  return names.map((name) => {
    if (!(PLACEMENTS as readonly string[]).includes(name)) {
      throw new RangeError(
        `Cannot run configuration "${name}": not one of ${PLACEMENTS.join(", ")}`,
      );
    }
    return { name: name as PlacementName, ...all[name as PlacementName] };
  });
}
