/**
 * @module The plan panel's summary of a plan, per backend: experts it hosts over all
 * layers (with the expert bytes a backend reports, the bytes the plan puts there) and
 * the replicas it had to load since the previous stored plan (moves). Pure.
 */
import { hostedExperts, type PlacementPlan } from "../../../shared/placement_plan.ts";

/** One backend's share of a plan. */
export interface BackendPlanSummary {
  backend: string;
  /** (layer, expert) pairs hosted, all layers. */
  hosted: number;
  /** Of them, pairs the previous plan did not host there (replicas loaded by the switch). */
  moved: number;
}

/** The summary of `plan` against `previous` (null: none, everything counts as moved). */
export interface PlanMoves {
  /** Version compared with; null when there is no previous plan. */
  from_version: number | null;
  /** Replicas loaded over all backends by the switch to `plan`. */
  moved: number;
  backends: BackendPlanSummary[];
}

/** Experts hosted and replicas moved per backend of `plan` since `previous`. */
export function planMoves(plan: PlacementPlan, previous: PlacementPlan | null): PlanMoves {
  const backends = plan.backends.map(({ id }) => {
    const now = hostedExperts(plan, id);
    const before = previous === null ? [] : hostedExperts(previous, id);
    let hosted = 0;
    let moved = 0;
    now.forEach((experts, layer) => {
      const had = new Set(before[layer] ?? []);
      hosted += experts.length;
      for (const expert of experts) if (!had.has(expert)) moved++;
    });
    return { backend: id, hosted, moved };
  });
  return {
    from_version: previous?.version ?? null,
    moved: backends.reduce((sum, b) => sum + b.moved, 0),
    backends,
  };
}
