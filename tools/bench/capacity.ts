/**
 * @module Capacity as the best goodput over several closed-loop concurrencies in one run:
 * one fixed client count under-measures a pool that does more with more in flight (it
 * batches), and too many clients measure queueing, so each count runs in turn and the
 * best answers/s is the capacity. Overload levels (1×, 2×, 3×, 5×) are multiples of it.
 */
import { closedLoop } from "./load_generator.ts";
import { round } from "./stats.ts";
import type { PreparedRequest } from "./workload.ts";

/** One closed-loop run of {@linkcode measureCapacity}. */
export interface CapacityRun {
  concurrency: number;
  /** 200 answers per second. */
  goodput_rps: number;
  /** Non-200 answers (shed included). */
  errors: number;
}

/** The best run and every run. */
export interface Capacity {
  capacity_rps: number;
  best_concurrency: number;
  runs: CapacityRun[];
}

/** Default client counts tried. */
export const CAPACITY_CONCURRENCIES = [16, 32, 64, 128];

/** The best goodput over `concurrencies` closed-loop clients, `seconds` each. */
export async function measureCapacity(options: {
  url: string;
  requests: readonly PreparedRequest[];
  concurrencies?: readonly number[];
  seconds: number;
  /** Told after each run (progress lines). */
  onRun?: (run: CapacityRun) => void;
}): Promise<Capacity> {
  const runs: CapacityRun[] = [];
  for (const concurrency of options.concurrencies ?? CAPACITY_CONCURRENCIES) {
    const result = await closedLoop({
      url: options.url,
      requests: options.requests,
      concurrency,
      durationS: options.seconds,
    });
    const run = {
      concurrency,
      goodput_rps: round(result.ok / result.seconds, 1),
      errors: result.errors,
    };
    runs.push(run);
    options.onRun?.(run);
  }
  const best = bestRun(runs);
  return { capacity_rps: best.goodput_rps, best_concurrency: best.concurrency, runs };
}

/** The run with the highest goodput (the first of equals). */
export function bestRun(runs: readonly CapacityRun[]): CapacityRun {
  if (runs.length === 0) throw new RangeError("Cannot pick a capacity: no runs");
  return runs.reduce((best, run) => run.goodput_rps > best.goodput_rps ? run : best);
}
