/**
 * @module EPLB health, the balancer's own account of itself: plan switches by outcome and
 * trigger, how long each took from the decision to every backend active, when the last
 * one was, the expert weights they made backends load, and whether a rebalance is **due
 * but not happening** — the worst layer below `threshold` for longer than
 * {@linkcode STALL_INTERVALS} × `adjust_interval` without a switch — and why it is held.
 *
 * "Due" is the balancer's own judgement, evaluated every tick: strategy `dynamic`, the
 * current plan's worst layer under the short-window load below `threshold` (confirming or
 * armed). Armed in the hysteresis band above the threshold is not due: the plan is good
 * enough. Any switch (balancer, pre-warm or admin) ends it.
 */
import { hostedExperts, type PlacementPlan } from "../../../shared/placement_plan.ts";
import type { BackendBudget } from "./budget_slots.ts";
import type { DecisionOutcome, DecisionTrigger } from "./balancer_types.ts";
import type { HoldReason } from "./rebalancer.ts";

/**
 * A rebalance due for more than this many `adjust_interval`s without a switch is stalled
 * (the `rebalance_stalled` alert; `SwitchyardRebalanceStalled` in deploy/prometheus uses
 * the same 3). One interval is the balancer's own hold after a switch; three leave room
 * for a confirmation and a failed attempt.
 */
export const STALL_INTERVALS = 3;

/** Why a due rebalance did not happen: the decision's hold, or the switch's failure. */
export type DueReason = HoldReason | "staging_failed" | "conflict" | "error";

/** A due rebalance that has not happened. */
export interface RebalanceDue {
  /** Router clock ms since when it has been due. */
  since: number;
  reason: DueReason;
  /** The last decision's reason (or error). */
  detail: string;
  /** Worst layer's balancedness at the last evaluation, and the threshold. */
  worst: number;
  threshold: number;
}

/** What {@linkcode RebalanceHealth.snapshot} says. */
export interface HealthSnapshot {
  /** Router clock ms of the snapshot. */
  at: number;
  /** Decisions that tried to change something, by outcome and trigger. */
  outcomes: { outcome: DecisionOutcome; trigger: DecisionTrigger; count: number }[];
  /** Router clock ms of the last switch; null: none since start. */
  lastSwitchAt: number | null;
  /** Expert hostings and bytes switches made backends load, since start. */
  moved: { experts: number; bytes: number };
  /** Switches from decision to every backend active. */
  durations: { count: number; sumS: number; lastS: number | null };
  /** The due rebalance not happening, or null. */
  due: (RebalanceDue & { seconds: number; stalled: boolean }) | null;
  adjustIntervalMs: number;
  /** `STALL_INTERVALS × adjust_interval`. */
  stallAfterMs: number;
}

const KEPT_DURATIONS = 256;

/** The balancer's health counters; see the module doc. */
export class RebalanceHealth {
  readonly adjustIntervalMs: number;
  readonly #outcomes = new Map<
    string,
    { outcome: DecisionOutcome; trigger: DecisionTrigger; count: number }
  >();
  #lastSwitchAt: number | null = null;
  #moved = { experts: 0, bytes: 0 };
  #durations: number[] = [];
  #durationCount = 0;
  #durationSumS = 0;
  #due: RebalanceDue | null = null;

  constructor(options: { adjustIntervalMs: number }) {
    this.adjustIntervalMs = options.adjustIntervalMs;
  }

  /** Counts a decision that tried to change something (every outcome but `kept`). */
  decided(outcome: DecisionOutcome, trigger: DecisionTrigger): void {
    if (outcome === "kept") return;
    const key = `${outcome}/${trigger}`;
    const entry = this.#outcomes.get(key) ?? { outcome, trigger, count: 0 };
    entry.count++;
    this.#outcomes.set(key, entry);
  }

  /** A plan became current at `at`, loading `moved`; a due rebalance is over. */
  switched(at: number, moved: { experts: number; bytes: number }): void {
    this.#lastSwitchAt = at;
    this.#moved = {
      experts: this.#moved.experts + moved.experts,
      bytes: this.#moved.bytes + moved.bytes,
    };
    this.#due = null;
  }

  /** Every backend runs the switched plan, `ms` after it was decided. */
  activated(ms: number): void {
    const seconds = Math.max(0, ms) / 1000;
    this.#durations.push(seconds);
    if (this.#durations.length > KEPT_DURATIONS) this.#durations.shift();
    this.#durationCount++;
    this.#durationSumS += seconds;
  }

  /** Durations (s) observed after the first `cursor` ones, and the new cursor. */
  durationsSince(cursor: number): { values: number[]; cursor: number } {
    const first = this.#durationCount - this.#durations.length;
    const from = Math.max(0, cursor - first);
    return { values: this.#durations.slice(from), cursor: this.#durationCount };
  }

  /**
   * One evaluation: due (`reason` why it did not switch) or not. Due since the first
   * evaluation that found it so, until one that does not or a switch.
   */
  evaluated(
    at: number,
    state: { due: false } | {
      due: true;
      reason: DueReason;
      detail: string;
      worst: number;
      threshold: number;
    },
  ): void {
    if (!state.due) {
      this.#due = null;
      return;
    }
    const { due: _due, ...now } = state;
    this.#due = { ...now, since: this.#due?.since ?? at };
  }

  /** The health now. */
  snapshot(now: number): HealthSnapshot {
    const stallAfterMs = STALL_INTERVALS * this.adjustIntervalMs;
    const due = this.#due;
    return {
      at: now,
      outcomes: [...this.#outcomes.values()].map((entry) => ({ ...entry })),
      lastSwitchAt: this.#lastSwitchAt,
      moved: { ...this.#moved },
      durations: {
        count: this.#durationCount,
        sumS: this.#durationSumS,
        lastS: this.#durations.at(-1) ?? null,
      },
      due: due === null ? null : {
        ...due,
        seconds: Math.max(0, now - due.since) / 1000,
        stalled: now - due.since > stallAfterMs,
      },
      adjustIntervalMs: this.adjustIntervalMs,
      stallAfterMs,
    };
  }
}

/** Expert hostings `to` adds to `from` (null: none before), and their bytes per backend budget. */
export function weightsMoved(
  from: PlacementPlan | null,
  to: PlacementPlan,
  budgets: ReadonlyMap<string, BackendBudget>,
): { experts: number; bytes: number } {
  let experts = 0;
  let bytes = 0;
  for (const backend of to.backends) {
    const before = from === null ? [] : hostedExperts(from, backend.id);
    let added = 0;
    hostedExperts(to, backend.id).forEach((layer, l) => {
      const had = new Set(before[l] ?? []);
      for (const expert of layer) if (!had.has(expert)) added++;
    });
    experts += added;
    bytes += added * (budgets.get(backend.id)?.expertBytes ?? 0);
  }
  return { experts, bytes };
}
