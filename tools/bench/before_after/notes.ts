/**
 * @module The facts of one before/after run that `summary.md` lists under its header, pure:
 * model, pool, seeds, phases, arrivals, the time compression and what it means for each
 * configuration's clock, the load generator, and the wall time per pool.
 */
import { resolveConfig } from "../../../shared/config.ts";
import type { ModelManifest } from "../../../shared/model_manifest.ts";
import { compression, eplbPeriodS, loadSeconds, type PhasePlan } from "./phases.ts";

/** What the notes describe. */
export interface RunFacts {
  manifest: ModelManifest;
  phases: PhasePlan;
  pool: { backends: number; budgetMb: number; redundancy: number; hostedPerBackend: number };
  seeds: readonly number[];
  concurrency: number;
  warmClients: number;
  burstiness: number;
  zipf: number;
  /** Tokens per request, uniform; null: the workload's default sizes. */
  tokens: { min: number; max: number } | null;
}

/** One line per fact. */
export function runNotes(facts: RunFacts): string[] {
  const { manifest, phases, seeds, concurrency, warmClients, burstiness, zipf, pool, tokens } =
    facts;
  const defaults = resolveConfig();
  return [
    `model ${manifest.name}: ${manifest.layers} layers × ${manifest.experts} experts, ` +
    `top-${manifest.top_k}${
      manifest.groups ? ` within ${manifest.topk_group} of ${manifest.groups} groups` : ""
    }; Zipf ${zipf} over the request types; ${
      tokens === null
        ? "1 + geometric (mean ≈ 3, at most 16) tokens per request"
        : `${tokens.min}–${tokens.max} tokens per request (uniform)`
    }`,
    `pool: ${pool.backends} backends × 1 executor, memory budget ${pool.budgetMb} MiB each ` +
    `(${pool.hostedPerBackend} of ${manifest.experts} experts per layer), redundancy ${pool.redundancy}; ` +
    `entry routing ${defaults.router.policy}, batching ${defaults.batching.policy} ` +
    `${defaults.batching.min}–${defaults.batching.max} (the defaults, for every configuration)`,
    `seeds ${seeds.join(", ")} (a fresh pool per configuration and seed; each seed draws its own ` +
    "requests and arrivals); figures are the mean over seeds with [min–max]",
    `phases per pool: warm-up closed loop × ${warmClients} clients (excluded), at least ` +
    `${phases.warmS} s and until the plan has not changed for ${phases.settleS} s (at most ` +
    `${phases.maxWarmS} s); ` +
    `idle ${phases.idleS} s (1 client); saturation ${phases.saturationS} s × ${concurrency} clients after ` +
    `${phases.rampS} s of ramp (excluded); ` +
    `sweep ${phases.sweepS} s at each of ${phases.rates.join(", ")} × static's capacity; ` +
    `shift ${phases.shiftS} s at ${phases.shiftRate} × static's capacity, the mix changing ` +
    `${phases.shifts} times (ranking rotated by one type each time: the hot experts move to ` +
    "other backends' blocks)",
    `open-loop arrivals: ${
      burstiness === 1 ? "Poisson" : `gamma gaps, burstiness ${burstiness}`
    }; latency from the scheduled arrival`,
    `time compression: the shift phase is one hour of load in ${phases.shiftS} s ` +
    `(${compression(phases).toFixed(0)}×), so eplb-10min re-plans every ${
      eplbPeriodS(phases).toFixed(1)
    } s, from the end of the warm-up to the end of the run (each switch takes the time it takes: ` +
    "staging is not compressed). switchyard runs its defaults on the real clock (evaluates every " +
    `${defaults.expert_balancer.evaluate_interval / 1000} s, at most one switch per ` +
    `${defaults.expert_balancer.adjust_interval / 1000} s unless the worst layer gains ` +
    `${defaults.expert_balancer.switch_gain}): in load time one adjust_interval is ${
      ((defaults.expert_balancer.adjust_interval / 1000) * compression(phases) / 60).toFixed(0)
    } minutes`,
    `load generator: this Deno process (keep-alive fetch), on the same cores as the pool; its ` +
    "CPU is in the capacity table",
    `wall time per pool: about ${(loadSeconds(phases) + 30).toFixed(0)} s ` +
    "(load phases plus start-up and drains)",
  ];
}
