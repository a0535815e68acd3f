/**
 * @module Adopting the backends' plan when the KV has none: a router that finds no
 * current plan (a new, deleted or replaced KV file) asks every backend for the plan it
 * runs (`GET /v2/plan/active`) and makes the newest usable one current, instead of
 * pushing a static plan over the placement the pool already runs.
 *
 * Design.
 * - Usable: for the served model, fits its shape, and names exactly the live pool's
 *   backends (ids and urls, in order) — a plan for another pool would be replaced at
 *   once anyway. Newest: the highest version; backends on older versions (or none) are
 *   then brought onto it by reconciliation.
 * - Live replica weights the backends hold are dropped: the router derives them again.
 * - The store writes it only while there is still no current plan (fenced by the lease
 *   like any switch), so two routers never adopt over each other or over a switch.
 * - {@linkcode newestAdoptable} is pure; {@linkcode PlanAdoption} does the I/O.
 */
import type { Logger } from "../../../shared/logger.ts";
import {
  type PlacementPlan,
  type PlanBackend,
  planProblem,
} from "../../../shared/placement_plan.ts";
import { PlanCallError, type PlanClient } from "./plan_client.ts";
import type { PlanStore } from "./plan_store.ts";
import { type ModelShape, sameBackends } from "./rebalancer.ts";

/** The newest of `plans` usable for `model` on `backends`, without replica weights; or null. */
export function newestAdoptable(
  plans: readonly (PlacementPlan | null)[],
  model: ModelShape,
  backends: readonly PlanBackend[],
): PlacementPlan | null {
  let newest: PlacementPlan | null = null;
  for (const plan of plans) {
    if (plan === null || planProblem(plan, model) !== null) continue;
    if (!sameBackends(plan.backends, backends)) continue;
    if (newest === null || plan.version > newest.version) newest = plan;
  }
  if (newest === null) return null;
  return { ...newest, layers: newest.layers.map(({ phy2log }) => ({ phy2log: [...phy2log] })) };
}

/** Options of {@linkcode PlanAdoption}. */
export interface PlanAdoptionOptions {
  store: Pick<PlanStore, "adopt">;
  client: Pick<PlanClient, "activePlan">;
  logger: Logger;
}

/** Adopts the newest plan the backends run; see the module doc. */
export class PlanAdoption {
  readonly #options: PlanAdoptionOptions;

  constructor(options: PlanAdoptionOptions) {
    this.#options = options;
  }

  /** The plan made current, or null (no backend runs a usable plan, or the store refused). */
  async adopt(model: ModelShape, backends: readonly PlanBackend[]): Promise<PlacementPlan | null> {
    const { client, store, logger } = this.#options;
    const plans = await Promise.all(backends.map(async (backend) => {
      try {
        return await client.activePlan(backend);
      } catch (error) {
        if (!(error instanceof PlanCallError)) throw error;
        logger.warn("backend plan unreadable for adoption", {
          backend: backend.id,
          error: error.message,
        });
        return null;
      }
    }));
    const plan = newestAdoptable(plans, model, backends);
    if (plan === null || !await store.adopt(plan)) return null;
    logger.info("plan adopted", {
      event: "plan_adopt",
      model: plan.model,
      version: plan.version,
      reason: plan.reason,
      reported: Object.fromEntries(backends.map((b, i) => [b.id, plans[i]?.version ?? null])),
    });
    return plan;
  }
}
