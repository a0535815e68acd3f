/**
 * @module What `bench:balance --phase reaction` reads from one step: the polls of the
 * measured per-layer backend balancedness and the balancer's decisions, reduced to
 * times after the step (same machine clock). Pure.
 *
 * - `dropS`: first poll with the measured worst layer below the threshold (the step
 *   unbalanced the plan in force); null when it never did.
 * - `switchS`: first `rebalance` decision with outcome `switched` after the step. The
 *   balancer records it once the new version is active on every backend, so this is
 *   "step → new plan active".
 * - `recoveredS`: first poll after the switch from which the measured worst layer stayed
 *   at or above the threshold for {@linkcode RECOVERY_POLLS} consecutive polls.
 */

/** Consecutive polls at or above the threshold that count as recovered. */
export const RECOVERY_POLLS = 3;

/** One poll: ms after the step and the measured worst layer (null: nothing measured). */
export interface BalanceSample {
  t: number;
  worst: number | null;
}

/** A balancer decision as `GET /api/plan` lists it (`at` on the same clock as the step). */
export interface TimelineDecision {
  at: number;
  action: string;
  outcome: string;
  before: number | null;
  after: number | null;
  reason: string;
}

/** The reduced timeline; times in seconds after the step. */
export interface ReactionTimeline {
  dropS: number | null;
  lowestMeasured: number | null;
  switchS: number | null;
  switched: TimelineDecision | null;
  recoveredS: number | null;
  /** Lowest worst layer the balancer itself saw (decisions' `before`) after the step. */
  lowestSeenByBalancer: number | null;
}

/** Reduces one step's polls and decisions; see the module doc. */
export function reactionTimeline(
  step: number,
  samples: readonly BalanceSample[],
  decisions: readonly TimelineDecision[],
  threshold: number,
): ReactionTimeline {
  const ordered = [...samples].sort((a, b) => a.t - b.t);
  const measured = ordered.filter((s) => s.worst !== null) as { t: number; worst: number }[];
  const drop = measured.find((s) => s.worst < threshold);
  const after = decisions.filter((d) => d.at > step);
  const switched = after.filter((d) => d.action === "rebalance" && d.outcome === "switched")
    .sort((a, b) => a.at - b.at)[0] ?? null;
  let recoveredS: number | null = null;
  if (switched !== null) {
    const since = measured.filter((s) => s.t >= switched.at - step);
    for (let i = 0; i + RECOVERY_POLLS <= since.length; i++) {
      if (since.slice(i, i + RECOVERY_POLLS).every((s) => s.worst >= threshold)) {
        recoveredS = since[i]!.t / 1000;
        break;
      }
    }
  }
  const seen = after.flatMap((d) => d.before === null ? [] : [d.before]);
  return {
    dropS: drop === undefined ? null : drop.t / 1000,
    lowestMeasured: measured.length === 0 ? null : Math.min(...measured.map((s) => s.worst)),
    switchS: switched === null ? null : (switched.at - step) / 1000,
    switched,
    recoveredS,
    lowestSeenByBalancer: seen.length === 0 ? null : Math.min(...seen),
  };
}
