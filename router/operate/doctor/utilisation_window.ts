/**
 * @module The load signal over the last minutes, sampled every load round, counted only
 * while the pool serves traffic: the doctor asks how close to capacity the pool runs
 * when there is work, not how idle an unused pool is. Per round: the pool's saturation
 * (`router/control/load/saturation.ts`, mean over fresh backends, ≥ 0.9 while anything is
 * shed), whether the pool shed work (the router's 429s at its limits, backends' 503s),
 * and the mean executor utilisation (device busy), so the doctor can show all three.
 * Besides means, the 90th percentile of saturation: a pool overloaded for a minute in ten
 * is not "below capacity", however calm the other nine were.
 */
import type { PoolLoad } from "../../control/load/pool_load.ts";
import type { Bottleneck } from "../../control/load/saturation.ts";

interface Sample {
  at: number;
  utilisation: number;
  saturation: number | undefined;
  bottleneck: Bottleneck | undefined;
  /** The router or a backend shed requests in this round. */
  shed: boolean;
}

/** Means over the busy rounds of the window. */
export interface LoadWindowMeans {
  /** Mean executor utilisation. */
  utilisation: number;
  /** Mean pool saturation; `undefined` when no round carried it (older backends). */
  saturation: number | undefined;
  /** 90th percentile of the rounds' pool saturation; `undefined` like `saturation`. */
  saturationP90: number | undefined;
  /** Share of the busy rounds in which the router or a backend shed requests. */
  shedShare: number;
  /** The bottleneck named most often among those rounds. */
  bottleneck: Bottleneck | undefined;
}

/** Sliding window of the pool's load signal while busy; bounded. */
export class UtilisationWindow {
  readonly #windowMs: number;
  readonly #samples: Sample[] = [];

  /** `windowMs`: how far back to look (default 10 minutes). */
  constructor(windowMs = 600_000) {
    this.#windowMs = windowMs;
  }

  /** Adds one load round (skipped when no fresh backend moved tokens). */
  record(load: PoolLoad): void {
    const fresh = load.backends.filter((b) => !b.stale && b.utilisation !== undefined);
    const tokens = fresh.reduce((sum, b) => sum + (b.tokensPerS ?? 0), 0);
    if (fresh.length > 0 && tokens > 0) {
      const mean = fresh.reduce((sum, b) => sum + b.utilisation!, 0) / fresh.length;
      const worst = fresh.filter((b) => b.saturation !== undefined)
        .sort((a, b) => b.saturation!.value - a.saturation!.value)[0];
      this.#samples.push({
        at: load.at,
        utilisation: mean,
        saturation: load.pool.saturation,
        bottleneck: worst?.saturation?.bottleneck,
        shed: (load.pool.routerShedPerS ?? 0) > 0 || fresh.some((b) => (b.shedPerS ?? 0) > 0),
      });
    }
    while (this.#samples.length > 0 && this.#samples[0]!.at < load.at - this.#windowMs) {
      this.#samples.shift();
    }
  }

  /** Mean utilisation over the busy rounds in the window ending at `now`; `undefined` if none. */
  mean(now: number): number | undefined {
    return this.means(now)?.utilisation;
  }

  /** Means of the load signal over the busy rounds ending at `now`; `undefined` if none. */
  means(now: number): LoadWindowMeans | undefined {
    const recent = this.#samples.filter((s) => s.at >= now - this.#windowMs && s.at <= now);
    if (recent.length === 0) return undefined;
    const saturations = recent.flatMap((s) => s.saturation === undefined ? [] : [s.saturation]);
    const counts = new Map<Bottleneck, number>();
    for (const s of recent) {
      if (s.bottleneck) counts.set(s.bottleneck, (counts.get(s.bottleneck) ?? 0) + 1);
    }
    const bottleneck = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
    const sorted = [...saturations].sort((a, b) => a - b);
    return {
      utilisation: recent.reduce((sum, s) => sum + s.utilisation, 0) / recent.length,
      saturation: saturations.length === 0
        ? undefined
        : saturations.reduce((a, b) => a + b, 0) / saturations.length,
      saturationP90: sorted.length === 0
        ? undefined
        : sorted[Math.min(sorted.length - 1, Math.ceil(0.9 * sorted.length) - 1)],
      shedShare: recent.filter((s) => s.shed).length / recent.length,
      bottleneck,
    };
  }
}
