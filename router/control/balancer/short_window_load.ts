/**
 * @module The balancer's short load window: per model and layer an EWMA of the expert
 * tokens/s vectors of every load round, with time constant `expert_balancer.detect_window`
 * (default 5 s) — `α = 1 − exp(−Δt ÷ τ)` for a round Δt after the previous one, so a
 * missed round weighs in proportion. The long window (`expert_balancer.window`, the KV
 * history's EWMA) smooths forecasts and the dashboard; detecting a skew step within
 * seconds needs this short one. Pure state, fed by the leader's load rounds.
 */
import type { PoolLoad } from "../load/pool_load.ts";

interface Entry {
  at: number;
  layers: number[][];
}

/** EWMA of per-layer expert load over a short window; see the module doc. */
export class ShortWindowLoad {
  readonly #tauMs: number;
  readonly #models = new Map<string, Entry>();

  constructor(tauMs: number) {
    if (!(tauMs > 0)) throw new RangeError(`Cannot keep a load window of ${tauMs} ms`);
    this.#tauMs = tauMs;
  }

  /** Adds one load round. */
  record(load: PoolLoad): void {
    for (const { model, layers } of load.models) {
      const vectors = layers.map((layer) => [...layer.expertTokensPerS]);
      const old = this.#models.get(model);
      const sameShape = old !== undefined && old.layers.length === vectors.length &&
        old.layers.every((row, l) => row.length === vectors[l]!.length);
      if (!sameShape || load.at <= old!.at) {
        if (!sameShape) this.#models.set(model, { at: load.at, layers: vectors });
        continue;
      }
      const alpha = 1 - Math.exp(-(load.at - old!.at) / this.#tauMs);
      old!.layers.forEach((row, l) => {
        for (let e = 0; e < row.length; e++) row[e]! += alpha * (vectors[l]![e]! - row[e]!);
      });
      old!.at = load.at;
    }
  }

  /** `[layers][experts]` smoothed tokens/s of `model`; null before its first round. */
  load(model: string): number[][] | null {
    const entry = this.#models.get(model);
    return entry === undefined ? null : entry.layers.map((row) => [...row]);
  }
}
