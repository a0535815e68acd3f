/**
 * @module Reconciled placement: after every load round (on the leader) the backends'
 * reported plan versions are compared with the current plan in KV, and a backend that
 * runs another version — typically one that restarted and reports none — is brought back:
 * staged (unless it already staged the current version), activated, released.
 *
 * Design.
 * - Idea: the plan in KV is the desired state and load reports are the observed state;
 *   a mismatch is repaired from the plan, never by changing the plan. A plan switch is
 *   the only writer of the current version; the reconciler only pushes what is current.
 * - Reports lag: a mismatch seen in a report is confirmed with the backend's own
 *   `GET /v2/plan` before anything is sent (a switch may have activated it meanwhile).
 * - Failures back off per backend: 2 s after the first, doubling up to 30 s, so a broken
 *   backend is not staged every round; a success clears its backoff.
 * - Only backends the current plan names are reconciled (others are discovery's and the
 *   balancer's business: a changed pool is re-planned, not reconciled).
 * - {@linkcode planMismatches} is pure; {@linkcode PlanReconciler} does the I/O.
 */
import type { Logger } from "../../../shared/logger.ts";
import type { PlacementPlan } from "../../../shared/placement_plan.ts";
import type { Clock } from "../../runtime/clock.ts";
import { PlanCallError, type PlanClient } from "./plan_client.ts";
import type { PlanStore } from "./plan_store.ts";

/** What a backend's latest fresh load report says about its plan. */
export interface ReportedPlan {
  /** The backend's own id (as plans name it). */
  backend: string;
  active: number | null;
  staged: number | null;
}

/** A backend of the current plan that reports another active version. */
export interface PlanMismatch {
  backend: string;
  active: number | null;
  staged: number | null;
}

/** Backends of `current` whose reported active version is not `current.version`. */
export function planMismatches(
  current: PlacementPlan,
  reported: readonly ReportedPlan[],
): PlanMismatch[] {
  const members = new Set(current.backends.map((b) => b.id));
  return reported
    .filter((r) => members.has(r.backend) && r.active !== current.version)
    .map(({ backend, active, staged }) => ({ backend, active, staged }));
}

/** One reconciliation attempt's result. */
export interface ReconcileResult {
  backend: string;
  version: number;
  /** What it ran before. */
  was: number | null;
  outcome: "reconciled" | "failed" | "already";
  error?: string;
}

/** Counters of reconciliation attempts since start (metrics). */
export interface ReconcileCounts {
  reconciled: number;
  failed: number;
}

/** Options of {@linkcode PlanReconciler}. */
export interface PlanReconcilerOptions {
  store: Pick<PlanStore, "current">;
  client: Pick<PlanClient, "stage" | "activate" | "release" | "status">;
  clock: Clock;
  logger: Logger;
  /** Backoff after a backend's first failure (ms), doubled per failure; default 2000. */
  retryMs?: number;
  /** Longest backoff (ms); default 30 000. */
  maxRetryMs?: number;
}

/** Brings backends back onto the current plan; see the module doc. */
export class PlanReconciler {
  readonly #options: PlanReconcilerOptions;
  readonly #backoff = new Map<string, { failures: number; until: number }>();
  readonly counts: ReconcileCounts = { reconciled: 0, failed: 0 };

  constructor(options: PlanReconcilerOptions) {
    this.#options = options;
  }

  /** Reconciles every backend of `model`'s current plan that reports another version. */
  async reconcile(model: string, reported: readonly ReportedPlan[]): Promise<ReconcileResult[]> {
    const current = await this.#options.store.current(model);
    if (current === null) return [];
    const now = this.#options.clock.now();
    const due = planMismatches(current, reported).filter((m) =>
      (this.#backoff.get(m.backend)?.until ?? -Infinity) <= now
    );
    return await Promise.all(due.map((mismatch) => this.#reconcileOne(current, mismatch)));
  }

  async #reconcileOne(plan: PlacementPlan, mismatch: PlanMismatch): Promise<ReconcileResult> {
    const { client, logger, clock } = this.#options;
    const only = [mismatch.backend];
    const result = { backend: mismatch.backend, version: plan.version, was: mismatch.active };
    try {
      // The report may be a round old: ask the backend itself before acting.
      const status = await client.status(plan.backends.find((b) => b.id === mismatch.backend)!);
      if (status.active === plan.version) {
        this.#backoff.delete(mismatch.backend);
        return { ...result, outcome: "already" };
      }
      const started = clock.now();
      if (status.staged !== plan.version) await client.stage(plan, only);
      await client.activate(plan, only);
      this.#backoff.delete(mismatch.backend);
      this.counts.reconciled++;
      logger.info("plan reconciled", {
        event: "plan_reconcile",
        model: plan.model,
        backend: mismatch.backend,
        version: plan.version,
        was: status.active,
        staged: status.staged !== plan.version,
        ms: clock.now() - started,
      });
      await client.release(plan, only).catch((error) => {
        if (!(error instanceof PlanCallError)) throw error;
        logger.warn("plan release failed", { backend: mismatch.backend, error: error.message });
      });
      return { ...result, was: status.active, outcome: "reconciled" };
    } catch (error) {
      if (!(error instanceof PlanCallError)) throw error;
      const failures = (this.#backoff.get(mismatch.backend)?.failures ?? 0) + 1;
      const wait = Math.min(
        (this.#options.retryMs ?? 2000) * 2 ** (failures - 1),
        this.#options.maxRetryMs ?? 30_000,
      );
      this.#backoff.set(mismatch.backend, { failures, until: clock.now() + wait });
      this.counts.failed++;
      logger.warn("plan reconciliation failed", {
        event: "plan_reconcile",
        model: plan.model,
        backend: mismatch.backend,
        version: plan.version,
        error: error.message,
        retry_in_ms: wait,
      });
      return { ...result, outcome: "failed", error: error.message };
    }
  }
}

/** The reported plans of a load round's fresh backends (those whose reports carry one). */
export function reportedPlans(
  backends: readonly {
    name: string;
    stale: boolean;
    plan?: { active: number | null; staged: number | null } | undefined;
  }[],
): ReportedPlan[] {
  return backends.flatMap((b) =>
    b.stale || b.plan === undefined
      ? []
      : [{ backend: b.name, active: b.plan.active, staged: b.plan.staged }]
  );
}
