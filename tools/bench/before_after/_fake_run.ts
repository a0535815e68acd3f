/**
 * @module Test support for the before/after's pure parts: a `ConfigRun` with the figures
 * a test chooses, and no pool behind it.
 */
import { emptyResult, type LoadResult } from "../load_generator.ts";
import type { PoolInterval } from "./pool_probe.ts";
import type { ConfigRun, PhaseRecord } from "./run_config.ts";

/** A load run of `count` requests of `latencyMs` each over `seconds`, 3 rows each. */
export function fakeLoad(count: number, latencyMs: number, seconds = 10): LoadResult {
  return {
    ...emptyResult(),
    seconds,
    sent: count,
    ok: count,
    rows: 3 * count,
    latencies: Array.from({ length: count }, () => latencyMs),
    timeline: Array.from(
      { length: count },
      (_, i) => [(i * seconds) / count, latencyMs, 3] as [number, number, number],
    ),
  };
}

/** A pool interval with these load spreads and busy shares. */
export function fakePool(backendCv: number, busy: number[] = [0.5, 0.5]): PoolInterval {
  return {
    seconds: 10,
    deviceBusy: busy,
    cores: { router: 0.2, backends: 1, generator: 0.1 },
    backendCv,
    backendBalancedness: 1 - backendCv,
    replicaCv: backendCv,
    logicalCv: 1,
  };
}

/** Figures of one fake run. */
export interface FakeRunOptions {
  config: string;
  seed: number;
  /** Saturation requests in 10 s. */
  saturated: number;
  /** Sweep: fraction → [requests, latency ms]. */
  sweep?: Record<string, [number, number]>;
  /** Shift phase: [requests, latency ms]. */
  shift?: [number, number];
  backendCv?: number;
  switches?: number;
  /** Device busy share per backend at saturation (default 0.5 each of 2). */
  saturationBusy?: number[];
}

/** A `ConfigRun` with those figures. */
export function fakeRun(options: FakeRunOptions): ConfigRun {
  const cv = options.backendCv ?? 0.4;
  const phase = (
    name: string,
    result: LoadResult,
    fraction: number | null = null,
  ): PhaseRecord => ({
    name,
    offeredRps: fraction === null ? null : fraction * 100,
    fraction,
    startS: 0,
    result,
    pool: fakePool(cv, name === "saturation" ? options.saturationBusy : undefined),
  });
  return {
    executor: "simulated",
    config: options.config,
    seed: options.seed,
    startupS: 5,
    warmedS: 15,
    slots: 102,
    phases: [
      phase("idle", fakeLoad(50, 10)),
      phase("saturation", fakeLoad(options.saturated, 100)),
      ...Object.entries(options.sweep ?? {}).map(([fraction, [count, ms]]) =>
        phase(`rate-${fraction}`, fakeLoad(count, ms), Number(fraction))
      ),
      ...(options.shift ? [phase("shift", fakeLoad(...options.shift, 30), 0.9)] : []),
    ],
    switches: Array.from({ length: options.switches ?? 0 }, (_, i) => ({
      at: i,
      atS: i,
      action: "rebalance",
      trigger: "balancer",
      version: i + 2,
      moved: 10,
    })),
    switching: null,
    replans: [],
    capacityRps: options.saturated / 10,
    mixStartsS: [0, 10, 20],
  };
}
