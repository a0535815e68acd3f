/**
 * @module Live load feedback into expert dispatch: after load rounds (at most every
 * `everyMs`), derives replica weights for the current plan from the backends' measured
 * utilisation (`replicaWeightsFromUtilisation`: weight = headroom) and sends them to
 * every backend of the plan (`PUT /v2/plan/weights`). Failures are logged and retried
 * on the next round; a backend on another plan version answers 409 and is skipped.
 */
import type { Logger } from "../../../shared/logger.ts";
import { replicaWeightsFromUtilisation } from "../../../shared/placement_plan.ts";
import type { PoolLoad } from "../load/pool_load.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import type { PlanStore } from "./plan_store.ts";

/** Options of {@linkcode ReplicaWeightsPusher}. */
export interface ReplicaWeightsPusherOptions {
  store: PlanStore;
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
  internalToken: string | undefined;
  /** Minimum time between pushes (default 5 s). */
  everyMs?: number;
}

/** Pushes utilisation-derived replica weights to the backends of the current plan. */
export class ReplicaWeightsPusher {
  readonly #options: ReplicaWeightsPusherOptions;
  #lastPush = -Infinity;
  /** Pushes sent, for tests and visibility. */
  pushes = 0;

  constructor(options: ReplicaWeightsPusherOptions) {
    this.#options = options;
  }

  /** Called after every load round with the served model's name. */
  async onLoad(load: PoolLoad, model: string | null): Promise<void> {
    const now = this.#options.clock.now();
    if (model === null || now - this.#lastPush < (this.#options.everyMs ?? 5000)) return;
    const plan = await this.#options.store.current(model);
    if (!plan) return;
    const utilisation = new Map<string, number>();
    for (const backend of load.backends) {
      if (!backend.stale && backend.utilisation !== undefined) {
        utilisation.set(backend.name, backend.utilisation);
      }
    }
    if (utilisation.size === 0) return;
    this.#lastPush = now;
    const body = JSON.stringify({
      version: plan.version,
      weights: replicaWeightsFromUtilisation(plan, utilisation),
    });
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.#options.internalToken) {
      headers["authorization"] = `Bearer ${this.#options.internalToken}`;
    }
    await Promise.all(plan.backends.map(async (backend) => {
      try {
        const response = await this.#options.fetch(`${backend.url}/v2/plan/weights`, {
          method: "PUT",
          headers,
          body,
        });
        await response.body?.cancel();
        if (!response.ok && response.status !== 409) {
          this.#options.logger.warn("replica weights not accepted", {
            backend: backend.id,
            status: response.status,
          });
        }
      } catch (error) {
        this.#options.logger.warn("replica weights not sent", {
          backend: backend.id,
          error: (error as Error).message,
        });
      }
    }));
    this.pushes++;
  }
}
