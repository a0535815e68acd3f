/**
 * @module Gathers the doctor's inputs from what the router measures live: the model
 * catalog (experts per layer), the pool load (utilisation, expert load, token rate) and
 * the recent-request window (latency variation, token rate through this router).
 */
import { topShare } from "../../control/load/load_stats.ts";
import type { PoolLoad } from "../../control/load/pool_load.ts";
import type { DoctorInputs } from "./doctor.ts";
import type { LoadWindowMeans } from "./utilisation_window.ts";

/** Live sources of {@linkcode doctorInputs}. */
export interface DoctorSources {
  /** Routed experts per layer of the served model, when a backend has announced it. */
  experts(): number | undefined;
  load(): PoolLoad;
  /** Mean executor utilisation while serving, over recent rounds (else the latest round's). */
  utilisation?(now: number): number | undefined;
  /** Means of the load signal while serving, over recent rounds (else the latest round's). */
  loadSignal?(now: number): LoadWindowMeans | undefined;
  /** Smoothed expert tokens/s of a layer, when history is kept. */
  ewma?(model: string, layer: number): readonly number[] | undefined;
  requests: {
    latencyCv(now: number): number | undefined;
    tokensPerS(now: number): number | undefined;
    /** Requests answered in the window and the time they span (ms). */
    volume?(now: number): { requests: number; spanMs: number };
  };
}

function mean(values: readonly number[]): number | undefined {
  return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length;
}

/** The doctor's inputs now. */
export function doctorInputs(sources: DoctorSources, now: number): DoctorInputs {
  const load = sources.load();
  const fresh = load.backends.filter((backend) => !backend.stale);
  const utilisations = fresh.flatMap((b) => b.utilisation === undefined ? [] : [b.utilisation]);
  // Hot experts: the smoothed load where kept, else the latest rates; idle layers skipped.
  const shares = load.models.flatMap(({ model, layers }) =>
    layers.flatMap((layer) => {
      const vector = sources.ewma?.(model, layer.layer) ?? layer.expertTokensPerS;
      return vector.some((v) => v > 0) ? [topShare(vector, 0.1)] : [];
    })
  );
  // Pool token rate: every router's traffic as the backends count it, else this router's.
  const reported = fresh.flatMap((b) => b.tokensPerS === undefined ? [] : [b.tokensPerS]);
  const poolRate = reported.length > 0 ? reported.reduce((a, b) => a + b, 0) : undefined;
  const signal = sources.loadSignal?.(now);
  const worst = fresh.filter((b) => b.saturation !== undefined)
    .sort((a, b) => b.saturation!.value - a.saturation!.value)[0];
  return {
    experts: sources.experts(),
    // An idle pool says nothing about utilisation under load: unknown, not 0 %.
    utilisation: signal?.utilisation ??
      (sources.utilisation ? sources.utilisation(now) : mean(utilisations)),
    // The busiest tenth of the busy rounds: a pool overloaded now and then is not below capacity.
    saturation: signal ? signal.saturationP90 : load.pool.saturation,
    shedShare: signal?.shedShare,
    bottleneck: signal ? signal.bottleneck : worst?.saturation?.bottleneck,
    traffic: sources.requests.volume?.(now),
    latencyCv: sources.requests.latencyCv(now),
    top10Share: mean(shares),
    tokensPerS: poolRate !== undefined && poolRate > 0
      ? poolRate
      : sources.requests.tokensPerS(now),
  };
}
