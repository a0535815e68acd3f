/**
 * @module The dashboard's averaging windows (10 s, 1 min): the last minute of load rounds
 * in memory, and per window the mean expert tokens/s per layer and the balancedness of
 * the backends' mean work — what the heatmap, the hot list and the header show when the
 * operator picks a window longer than one round.
 *
 * Design: every round keeps, per (model, layer), the pool's expert vector and each fresh
 * backend's routed-expert tokens/s in that layer. A window's expert value is the mean
 * over the rounds that carried that layer (a round without fresh data is missing, not
 * zero); a backend's work is its mean over the rounds it reported in, and balancedness
 * (mean ÷ max over backends) is taken of those means. No work in the window: `null`.
 * Bounded: rounds older than the longest window go.
 */
import { balancedness } from "../../../shared/balancedness.ts";
import type { PoolLoad } from "../../control/load/pool_load.ts";

/** Windows the dashboard offers beyond the latest round (ms). */
export const DASHBOARD_WINDOWS_MS = [10_000, 60_000] as const;

interface RoundLayer {
  experts: readonly number[];
  /** backend name → its routed-expert tokens/s in this layer. */
  work: Map<string, number>;
}

interface Round {
  at: number;
  /** `model` → `layer` → what this round saw. */
  layers: Map<string, Map<number, RoundLayer>>;
}

/** One layer over a window, as the snapshot serves it. */
export interface WindowLayer {
  layer: number;
  expert_tokens_s: number[];
  balancedness: number | null;
}

/** A window's view, as the snapshot serves it (`window` beside `load`). */
export interface WindowView {
  window_ms: number;
  /** Rounds averaged. */
  rounds: number;
  pool: {
    balancedness: number | null;
    worst_layer: { model: string; layer: number; balancedness: number } | null;
  };
  models: { model: string; layers: WindowLayer[] }[];
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function meanOf(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** Balancedness of per-backend mean work; null without work. */
function workBalance(perBackend: Map<string, number[]>): number | null {
  const means = [...perBackend.values()].map(meanOf);
  return means.some((m) => m > 0) ? round3(balancedness(means)) : null;
}

/** The last minute of rounds; see the module doc. */
export class LoadWindow {
  readonly #keepMs: number;
  readonly #rounds: Round[] = [];

  /** `keepMs`: how much history is kept (default the longest window, 60 s). */
  constructor(keepMs: number = Math.max(...DASHBOARD_WINDOWS_MS)) {
    this.#keepMs = keepMs;
  }

  /** Adds one round. */
  record(load: PoolLoad): void {
    const layers = new Map<string, Map<number, RoundLayer>>();
    for (const { model, layers: rows } of load.models) {
      const byLayer = new Map<number, RoundLayer>();
      for (const row of rows) {
        byLayer.set(row.layer, { experts: [...row.expertTokensPerS], work: new Map() });
      }
      layers.set(model, byLayer);
    }
    for (const backend of load.backends) {
      if (backend.stale || backend.model === undefined) continue;
      for (const own of backend.expertLayers ?? []) {
        const entry = layers.get(backend.model)?.get(own.layer);
        entry?.work.set(backend.name, own.expertTokensPerS.reduce((a, b) => a + b, 0));
      }
    }
    this.#rounds.push({ at: load.at, layers });
    while (this.#rounds.length > 0 && this.#rounds[0]!.at < load.at - this.#keepMs) {
      this.#rounds.shift();
    }
  }

  /** The view over the `windowMs` ending at `now`. */
  view(windowMs: number, now: number): WindowView {
    const rounds = this.#rounds.filter((r) => r.at > now - windowMs && r.at <= now);
    // Step 1: per (model, layer) the expert sums and per-backend work over the rounds.
    const sums = new Map<
      string,
      Map<number, { experts: number[]; n: number; work: Map<string, number[]> }>
    >();
    const poolWork = new Map<string, Map<string, number[]>>();
    for (const r of rounds) {
      for (const [model, byLayer] of r.layers) {
        let layers = sums.get(model);
        if (layers === undefined) sums.set(model, layers = new Map());
        const roundWork = new Map<string, number>();
        for (const [layer, seen] of byLayer) {
          let acc = layers.get(layer);
          if (acc === undefined) layers.set(layer, acc = { experts: [], n: 0, work: new Map() });
          seen.experts.forEach((v, e) => acc.experts[e] = (acc.experts[e] ?? 0) + v);
          acc.n++;
          for (const [backend, work] of seen.work) {
            const list = acc.work.get(backend) ?? acc.work.set(backend, []).get(backend)!;
            list.push(work);
            roundWork.set(backend, (roundWork.get(backend) ?? 0) + work);
          }
        }
        let pool = poolWork.get(model);
        if (pool === undefined) poolWork.set(model, pool = new Map());
        for (const [backend, work] of roundWork) {
          (pool.get(backend) ?? pool.set(backend, []).get(backend)!).push(work);
        }
      }
    }
    // Step 2: means, balancedness, the worst layer.
    let worst: WindowView["pool"]["worst_layer"] = null;
    const models = [...sums].sort(([a], [b]) => a.localeCompare(b)).map(([model, layers]) => ({
      model,
      layers: [...layers].sort(([a], [b]) => a - b).map(([layer, acc]) => {
        const balance = workBalance(acc.work);
        if (balance !== null && (worst === null || balance < worst.balancedness)) {
          worst = { model, layer, balancedness: balance };
        }
        return {
          layer,
          expert_tokens_s: Array.from(acc.experts, (sum) => round3((sum ?? 0) / acc.n)),
          balancedness: balance,
        };
      }),
    }));
    const allWork = new Map<string, number[]>();
    for (const perBackend of poolWork.values()) {
      for (const [backend, list] of perBackend) {
        (allWork.get(backend) ?? allWork.set(backend, []).get(backend)!).push(...list);
      }
    }
    return {
      window_ms: windowMs,
      rounds: rounds.length,
      pool: { balancedness: workBalance(allWork), worst_layer: worst },
      models,
    };
  }
}
