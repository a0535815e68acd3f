/**
 * @module Live load feedback into expert dispatch: after load rounds (at most every
 * `everyMs`), derives replica weights for the current plan from the backends' measured
 * utilisation (`replicaWeightsFromUtilisation`: weight = headroom) and sends them to
 * every backend of the plan (`PUT /v2/plan/weights`). Failures are logged and retried
 * on the next round; a backend on another plan version answers 409 and is skipped. Each
 * call is bounded by `timeoutMs` (a stopped backend must not hold the round), and carries
 * the plan owner (pool id, leader term) when one is configured; none is sent while the
 * owner source says this router does not steer.
 */
import type { Logger } from "../../../shared/logger.ts";
import { replicaWeightsFromUtilisation } from "../../../shared/placement_plan.ts";
import type { PoolLoad } from "../load/pool_load.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import { callJson } from "../../runtime/call_json.ts";
import type { PlanStore } from "./plan_store.ts";
import { isOwnerRefusal, ownerHeaders, type PlanOwner } from "../../../shared/plan_owner.ts";

/** Options of {@linkcode ReplicaWeightsPusher}. */
export interface ReplicaWeightsPusherOptions {
  store: PlanStore;
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
  internalToken: string | undefined;
  /** Minimum time between pushes (default 5 s). */
  everyMs?: number;
  /** Limit of each backend's call (default 2 s). */
  timeoutMs?: number;
  /** The pool id and leader term the calls carry; null: do not push (see `PlanClient`). */
  owner?: () => PlanOwner | null;
  /** Told of every backend that refused a push as from another pool or an older term. */
  onRefused?: (backend: string, reason: string) => void;
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
    const owner = this.#options.owner?.();
    if (owner === null) return;
    this.#lastPush = now;
    const body = {
      version: plan.version,
      weights: replicaWeightsFromUtilisation(plan, utilisation),
    };
    await Promise.all(plan.backends.map(async (backend) => {
      const answer = await callJson(this.#options, `${backend.url}/v2/plan/weights`, {
        method: "PUT",
        token: this.#options.internalToken,
        body,
        timeoutMs: this.#options.timeoutMs ?? 2000,
        ...(owner ? { headers: ownerHeaders(owner) } : {}),
      });
      // A backend on another version answers 409 and is skipped; a fence refusal is loud.
      if (answer.ok || (answer.reason.startsWith("HTTP 409") && !isOwnerRefusal(answer.reason))) {
        return;
      }
      if (isOwnerRefusal(answer.reason)) this.#options.onRefused?.(backend.id, answer.reason);
      this.#options.logger.warn("replica weights not accepted", {
        backend: backend.id,
        reason: answer.reason,
      });
    }));
    this.pushes++;
  }
}
