/**
 * @module Drives the `eplb-10min` configuration as DeepSeek describes its serving: every
 * period ("10 minutes" of load) it reads the expert load of the window since the last
 * re-plan from the backends' own counters, computes the greedy EPLB placement
 * (`eplb.ts`) and switches the pool to it through the router's admin API
 * (`POST /api/plan/apply {phy2log}`: stage on every backend, then switch). The router's
 * own balancer is configured never to trigger (`configs.ts`), so between two re-plans the
 * placement stays EPLB's; any other switch shows in the run's plan switches.
 */
import type { LoadReport } from "../../../shared/load_report.ts";
import type { TestPool } from "../../pool/processes.ts";
import { json } from "../http_probe.ts";
import { logicalLoads } from "./expert_load.ts";
import { eplbPhy2log } from "./eplb.ts";

/** One re-plan. */
export interface EplbReplan {
  /** When it started (epoch ms). */
  at: number;
  /** Wall time of the apply (stage on every backend, switch), ms; null when skipped or failed. */
  switchMs: number | null;
  version: number | null;
  /** Predicted balancedness of the greedy plan on its window (mean over layers). */
  predicted: number | null;
  /** Why nothing was applied, or the error; null when applied. */
  problem: string | null;
}

/** Options of {@linkcode EplbDriver}. */
export interface EplbDriverOptions {
  pool: TestPool;
  adminToken: string;
  model: { layers: number; experts: number; groups: number };
}

/** Re-plans a pool with greedy EPLB on demand ({@linkcode replan}) or every period. */
export class EplbDriver {
  readonly #options: EplbDriverOptions;
  readonly #replans: EplbReplan[] = [];
  #window: Map<string, LoadReport> | null = null;
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<unknown> = Promise.resolve();

  constructor(options: EplbDriverOptions) {
    this.#options = options;
  }

  /** Starts the window: the load counted from now on is what the next re-plan sees. */
  async open(): Promise<void> {
    this.#window = await this.#reports();
  }

  /**
   * Re-plans every `periodS` seconds until {@linkcode stop}. A period that comes while the
   * last re-plan is still switching is skipped (and recorded): one rebalance at a time.
   */
  every(periodS: number): void {
    let busy = false;
    this.#timer = setInterval(() => {
      if (busy) {
        this.#replans.push({
          at: Date.now(),
          switchMs: null,
          version: null,
          predicted: null,
          problem: "skipped: the last re-plan was still switching",
        });
        return;
      }
      busy = true;
      this.#running = this.replan().finally(() => busy = false);
    }, periodS * 1000);
  }

  /** Stops re-planning (waits for one in progress); returns every re-plan. */
  async stop(): Promise<EplbReplan[]> {
    clearInterval(this.#timer);
    await this.#running;
    return [...this.#replans];
  }

  /** One re-plan on the window's load; the next window starts now. */
  async replan(): Promise<EplbReplan> {
    const { pool, model } = this.#options;
    const at = Date.now();
    const record = (fields: Omit<EplbReplan, "at">) => {
      const replan = { at, ...fields };
      this.#replans.push(replan);
      return replan;
    };
    try {
      const now = await this.#reports();
      const weight = logicalLoads(model.experts, model.layers, this.#window ?? new Map(), now);
      this.#window = now;
      const plan = await json(`${pool.router.url}/api/plan`);
      const placed = eplbPhy2log(weight, {
        backends: plan.backends.length,
        slotsPerBackend: plan.slots_per_backend,
        groups: model.groups,
      });
      if (placed === null) {
        return record({
          switchMs: null,
          version: null,
          predicted: null,
          problem: "no expert load in the window",
        });
      }
      const started = performance.now();
      const applied = await this.#admin("POST", "/api/plan/apply", { phy2log: placed.phy2log });
      return record({
        switchMs: performance.now() - started,
        version: applied.version,
        predicted: placed.balancedness,
        problem: null,
      });
    } catch (error) {
      return record({
        switchMs: null,
        version: null,
        predicted: null,
        problem: (error as Error).message,
      });
    }
  }

  async #reports(): Promise<Map<string, LoadReport>> {
    const { pool } = this.#options;
    const auth = { authorization: `Bearer ${pool.token}` };
    const reports: LoadReport[] = await Promise.all(
      pool.backends.map((b) => json(`${b.url}/v2/load`, auth)),
    );
    return new Map(reports.map((r) => [r.backend, r]));
  }

  async #admin(method: string, path: string, body?: unknown) {
    const response = await fetch(`${this.#options.pool.router.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.#options.adminToken}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text}`);
    return JSON.parse(text);
  }
}
