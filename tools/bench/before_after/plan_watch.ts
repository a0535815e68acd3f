/**
 * @module Watches a router's placement plan during a run: polls `GET /api/plan` (which
 * keeps the last 20 balancer decisions) once a second and keeps every plan switch it
 * sees once — rebalances, EPLB applies, restores — with the time the router recorded it.
 */
import { json } from "../http_probe.ts";

/** One plan switch seen during the run. */
export interface PlanSwitch {
  /** When the router recorded it (epoch ms). */
  at: number;
  /** `rebalance`, `apply`, `initial`, `restore`… (the decision's action). */
  action: string;
  trigger: string;
  version: number | null;
  /** Replicas the switch moved onto backends. */
  moved: number;
}

interface Decision {
  at: number;
  action: string;
  trigger: string;
  outcome: string;
  version: number | null;
  moved: number | null;
}

/** Polls `routerUrl/api/plan` until {@linkcode PlanWatch.stop}. */
export class PlanWatch {
  readonly #url: string;
  readonly #startedAt = Date.now();
  readonly #seen = new Map<string, PlanSwitch>();
  #stopped = false;
  readonly #loop: Promise<void>;

  constructor(routerUrl: string, intervalMs = 1000) {
    this.#url = `${routerUrl}/api/plan`;
    this.#loop = this.#run(intervalMs);
  }

  async #run(intervalMs: number) {
    while (!this.#stopped) {
      await this.poll();
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }

  /** Reads the decisions once (also called at the end so the last switch is in). */
  async poll(): Promise<void> {
    try {
      const plan = await json(this.#url);
      for (const d of (plan.decisions ?? []) as Decision[]) {
        if (d.outcome !== "switched" && d.outcome !== "activate_partial") continue;
        const key = `${d.at}/${d.version}/${d.action}`;
        if (this.#seen.has(key) || d.at < this.#startedAt) continue;
        this.#seen.set(key, {
          at: d.at,
          action: d.action,
          trigger: d.trigger,
          version: d.version,
          moved: d.moved ?? 0,
        });
      }
    } catch { /* a missed poll is caught up by the next one (20 decisions kept) */ }
  }

  /** When the router recorded the last switch seen so far (epoch ms), or null (polls first). */
  async lastSwitchAt(): Promise<number | null> {
    await this.poll();
    let last: number | null = null;
    for (const s of this.#seen.values()) last = Math.max(last ?? 0, s.at);
    return last;
  }

  /** Stops polling; returns every switch seen, oldest first. */
  async stop(): Promise<PlanSwitch[]> {
    this.#stopped = true;
    await this.#loop;
    await this.poll();
    return [...this.#seen.values()].sort((a, b) => a.at - b.at);
  }
}
