/**
 * @module The two spread measures of the pool's load, each defined once here and read by
 * every surface (header, plan panel, advisor, alerts, `/metrics`, logs):
 *
 * - **Balancedness** — what placement controls: mean ÷ max over the fresh backends of
 *   the routed-expert tokens/s each ran (EPLB's measure over GPUs). Per layer: their
 *   work in that layer. For the pool: each backend's work summed over its layers (the
 *   same pool definition as the planner's prediction, `balancer/plan_math.ts`); the worst
 *   layer is reported beside it. 1 = even, 1/n = one backend does everything.
 * - **Expert skew** — what the gate does, placement cannot change it: how unevenly a
 *   layer's tokens spread over its logical experts, as the share of the hottest 10 % of
 *   experts ({@linkcode topShare}) and the coefficient of variation.
 *
 * Backends count when their report is fresh and has rates (two reports of one run); a
 * backend hosting nothing of a layer counts with 0 there. Pure.
 */
import { balancedness, coefficientOfVariation } from "../../../shared/balancedness.ts";
import { topShare } from "./load_stats.ts";

/** A backend's routed-expert work, as the load aggregate knows it. */
export interface BackendWork {
  model: string | undefined;
  stale: boolean;
  /** Per layer `expertTokensPerS[expert]`; `undefined` without rates. */
  expertLayers: readonly { layer: number; expertTokensPerS: readonly number[] }[] | undefined;
}

/** How unevenly a layer's tokens spread over its experts. */
export interface ExpertSkew {
  /** Share of the layer's tokens on its hottest 10 % of experts (at least one). */
  top10Share: number;
  /** Coefficient of variation of the experts' tokens/s. */
  cv: number;
}

/** The lowest per-layer balancedness and where. */
export interface WorstLayer {
  model: string;
  layer: number;
  balancedness: number;
}

/** Expert skew of one layer's expert vector. */
export function expertSkew(expertTokensPerS: readonly number[]): ExpertSkew {
  return {
    top10Share: topShare(expertTokensPerS, 0.1),
    cv: coefficientOfVariation(expertTokensPerS),
  };
}

/** Whether `backend` counts towards balancedness (fresh, with rates). */
export function countsForBalance(backend: BackendWork): boolean {
  return !backend.stale && backend.expertLayers !== undefined;
}

/** Each counting backend's routed-expert tokens/s in `layer` of `model` (0 where none). */
export function layerWork(
  backends: readonly BackendWork[],
  model: string,
  layer: number,
): number[] {
  return backends.filter((b) => countsForBalance(b) && b.model === model).map((b) =>
    (b.expertLayers!.find((l) => l.layer === layer)?.expertTokensPerS ?? [])
      .reduce((sum, rate) => sum + rate, 0)
  );
}

/** Balancedness of `layer` of `model`: mean ÷ max of {@linkcode layerWork}. */
export function layerBalancedness(
  backends: readonly BackendWork[],
  model: string,
  layer: number,
): number {
  return balancedness(layerWork(backends, model, layer));
}

/** Pool balancedness: mean ÷ max of each counting backend's work summed over its layers. */
export function poolBalancedness(backends: readonly BackendWork[], model?: string): number {
  return balancedness(
    backends.filter((b) => countsForBalance(b) && (model === undefined || b.model === model))
      .map((b) =>
        b.expertLayers!.reduce(
          (sum, l) => sum + l.expertTokensPerS.reduce((acc, rate) => acc + rate, 0),
          0,
        )
      ),
  );
}

/** The lowest of `layers` (model, layer, balancedness); null when there are none. */
export function worstLayer(
  layers: readonly { model: string; layer: number; balancedness: number }[],
): WorstLayer | null {
  let worst: WorstLayer | null = null;
  for (const { model, layer, balancedness } of layers) {
    if (worst === null || balancedness < worst.balancedness) {
      worst = { model, layer, balancedness };
    }
  }
  return worst;
}
