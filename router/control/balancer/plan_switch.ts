/**
 * @module One plan switch across the pool, the I/O half of the balancer.
 *
 * Steps: (1) `nextVersion` and `save` in KV; (2) stage on every backend (they load and
 * warm the experts the plan puts there, keeping the old ones); any stage failure abandons
 * the switch: the old plan stays current and nothing is activated; (3) `setCurrent`, an
 * atomic compare-and-set against the version (and pin) read before planning, so of two
 * routers racing only one switches and the loser activates nothing; (4) activate on every
 * backend; one that fails stays on the old version, loading on demand the experts it is
 * sent (answers stay correct), and is retried by {@linkcode completeActivation};
 * (5) release: backends unload what the new version does not need.
 *
 * The version is claimed before activation, not after: claiming after would let a router
 * that loses the race leave backends on its plan.
 */
import type { Logger } from "../../../shared/logger.ts";
import type { PlacementPlan } from "../../../shared/placement_plan.ts";
import type { Clock } from "../../runtime/clock.ts";
import { PlanCallError, type PlanClient, type StageResult } from "./plan_client.ts";
import type { PlanStore } from "./plan_store.ts";
import type { UnversionedPlan } from "./rebalancer.ts";

/** What a switch talks to. */
export interface PlanSwitchDeps {
  store: PlanStore;
  client: Pick<PlanClient, "stage" | "activate" | "release">;
  clock: Clock;
  logger: Logger;
}

/** What the caller read before planning; the switch only happens if it still holds. */
export interface SwitchExpectation {
  current: PlacementPlan | null;
  pinned: number | null;
}

/** How a switch ended; `plan` carries the version it was given either way. */
export type SwitchOutcome =
  /** Current everywhere (`pending` empty), or current with backends still to activate. */
  | { kind: "switched"; plan: PlacementPlan; pending: string[]; error?: string }
  /** Nothing changed: staging failed or another writer switched first. */
  | { kind: "stage_failed" | "conflict"; plan: PlacementPlan; error: Error };

/** A version whose activation some backends still owe. */
export interface PendingActivation {
  model: string;
  version: number;
  backends: string[];
}

/** Switches the pool to `placement` as a new version; see the module doc. KV errors throw. */
export async function switchPlan(
  placement: UnversionedPlan,
  expected: SwitchExpectation,
  deps: PlanSwitchDeps,
): Promise<SwitchOutcome> {
  const staged = await stagePlan(placement, deps);
  if (staged.kind === "stage_failed") return staged;
  return await activateStagedPlan(staged.plan, expected, deps);
}

/** A staged version (steps 1–2), or why staging failed (nothing changed then). */
export type StageOutcome =
  | { kind: "staged"; plan: PlacementPlan; results: StageResult[] }
  | { kind: "stage_failed"; plan: PlacementPlan; error: PlanCallError };

/**
 * Steps 1–2 alone: a new version saved in KV and staged on every backend of `placement`,
 * not current and not active anywhere. The pre-warm job stages an event's placement this
 * way ahead of the event and activates it later with {@linkcode activateStagedPlan}.
 */
export async function stagePlan(
  placement: UnversionedPlan,
  deps: PlanSwitchDeps,
): Promise<StageOutcome> {
  const { store, client, clock } = deps;
  // Step 1: the plan exists in KV before any backend hears of it.
  const version = await store.nextVersion(placement.model);
  const plan: PlacementPlan = { ...placement, version, createdAt: clock.now() };
  await store.save(plan);
  // Step 2: stage everywhere; any failure abandons the switch.
  try {
    const results = await client.stage(plan);
    return { kind: "staged", plan, results };
  } catch (error) {
    if (!(error instanceof PlanCallError)) throw error;
    return { kind: "stage_failed", plan, error };
  }
}

/**
 * Steps 3–5 for a version staged earlier ({@linkcode stagePlan}): claim it, activate it
 * everywhere, release. With `restage`, a backend that lost the staged version meanwhile
 * (another switch or a reconciliation staged over it, a restart) is staged again and
 * activated at once — staged long ago, that is likely; a switch that has just staged
 * leaves a failed backend pending instead. One that still fails is left pending.
 */
export async function activateStagedPlan(
  plan: PlacementPlan,
  expected: SwitchExpectation,
  deps: PlanSwitchDeps,
  options: { restage?: boolean } = {},
): Promise<SwitchOutcome> {
  const { store, client } = deps;
  // Step 3: claim the switch; of two racing routers only one succeeds.
  const claimed = await store.setCurrent(
    plan.model,
    plan.version,
    expected.current?.version ?? null,
    {
      expectedPinned: expected.pinned,
    },
  );
  if (!claimed) {
    const error = new Error(
      `Cannot switch to plan version ${plan.version}: the current plan or pin changed while ` +
        "staging (another router or an admin was first)",
    );
    return { kind: "conflict", plan, error };
  }
  // Step 4: activate everywhere; stragglers are retried later and load on demand meanwhile.
  try {
    await client.activate(plan);
  } catch (error) {
    if (!(error instanceof PlanCallError)) throw error;
    const failed = error.failures.map((f) => f.backend);
    const pending = options.restage ? await restageAndActivate(plan, failed, deps) : failed;
    if (pending.length > 0) return { kind: "switched", plan, pending, error: error.message };
  }
  // Step 5: drop what the new version does not need.
  await releasePlan(plan, deps);
  return { kind: "switched", plan, pending: [] };
}

/** Stages `plan` again on `backends` and activates it there; returns those still failing. */
async function restageAndActivate(
  plan: PlacementPlan,
  backends: string[],
  deps: PlanSwitchDeps,
): Promise<string[]> {
  try {
    await deps.client.stage(plan, backends);
    await deps.client.activate(plan, backends);
    return [];
  } catch (error) {
    if (!(error instanceof PlanCallError)) throw error;
    return error.failures.map((f) => f.backend);
  }
}

/**
 * Retries activation of the current plan on the backends that missed it (staging again
 * where a backend lost the staged plan, e.g. after a restart), then releases. Returns the
 * backends still pending; an empty list means done (or superseded by a newer version).
 */
export async function completeActivation(
  pending: PendingActivation,
  deps: PlanSwitchDeps,
): Promise<string[]> {
  const plan = await deps.store.current(pending.model);
  if (plan === null || plan.version !== pending.version) return [];
  // The whole plan goes to the pending backends only (a subset of its backends would not
  // be a valid plan: its slots are counted over all of them).
  const only = pending.backends;
  try {
    await deps.client.activate(plan, only);
  } catch (error) {
    if (!(error instanceof PlanCallError)) throw error;
    try {
      await deps.client.stage(plan, only);
      await deps.client.activate(plan, only);
    } catch (retryError) {
      if (!(retryError instanceof PlanCallError)) throw retryError;
      deps.logger.warn("plan activation still pending", {
        model: plan.model,
        version: plan.version,
        error: retryError.message,
      });
      return retryError.failures.map((f) => f.backend);
    }
  }
  deps.logger.info("plan activation completed", { model: plan.model, version: plan.version });
  await releasePlan(plan, deps);
  return [];
}

/** Asks every backend to unload what `plan` does not need; a failure is only logged. */
async function releasePlan(plan: PlacementPlan, deps: PlanSwitchDeps): Promise<void> {
  try {
    await deps.client.release(plan);
  } catch (error) {
    if (!(error instanceof PlanCallError)) throw error;
    // Harmless: the extras stay loaded until the next release.
    deps.logger.warn("plan release failed", {
      model: plan.model,
      version: plan.version,
      error: error.message,
    });
  }
}
