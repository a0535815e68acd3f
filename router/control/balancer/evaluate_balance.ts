/**
 * @module One balancer evaluation, pure: the trigger's hysteresis on the current plan's
 * worst layer ({@linkcode nextTrigger}), then {@linkcode decideRebalance} with the armed
 * state and the time since the last switch (`adjust_interval`, `switch_gain`). The
 * router's `Balancer` runs it every `evaluate_interval`; the simulator (`tools/sim/`)
 * runs the same function at the same cadence in virtual time.
 *
 * Cost: the planner runs only when the trigger is armed (rule 7 of `decideRebalance`
 * returns before planning); a held evaluation plans to learn the gain, unless no plan can
 * gain `switch_gain` (the current worst layer is above `1 − switch_gain`).
 */
import type { PlacementPlan, PlanBackend } from "../../../shared/placement_plan.ts";
import type { BackendBudget } from "./budget_slots.ts";
import type { BalancerSettings } from "./balancer_types.ts";
import {
  decideRebalance,
  loadShapeProblem,
  type ModelShape,
  nextTrigger,
  type PlacementChoiceSettings,
  type RebalanceDecision,
  sameBackends,
  type TriggerState,
  worstLayer,
} from "./rebalancer.ts";

/** The trigger state a balancer starts with. */
export const INITIAL_TRIGGER: TriggerState = { below: 0, armed: false };

/** Input of {@linkcode evaluateBalance}. */
export interface EvaluationInput {
  settings: Pick<
    BalancerSettings,
    "enabled" | "strategy" | "threshold" | "adjust_interval" | "switch_gain" | "redundancy"
  >;
  /** The trigger's state after the previous evaluation ({@linkcode INITIAL_TRIGGER} first). */
  trigger: TriggerState;
  /** Clock ms now, and of the last (non-initial) switch, or null when none yet. */
  now: number;
  lastSwitchAt: number | null;
  model: ModelShape;
  backends: readonly PlanBackend[];
  current: PlacementPlan | null;
  pinned: number | null;
  /** `[layers][experts]` observed load (the short detection window), or null. */
  loads: readonly (readonly number[])[] | null;
  budgets?: ReadonlyMap<string, BackendBudget>;
  /** Weigh full replication against expert parallelism; absent: expert parallelism only. */
  placement?: PlacementChoiceSettings;
}

/** The trigger's next state, the current plan's worst layer, and the decision. */
export interface Evaluation {
  trigger: TriggerState;
  /** The current plan's worst-layer balancedness under `loads`, or null when unusable. */
  worst: number | null;
  decision: RebalanceDecision;
}

/** One evaluation; see the module doc. */
export function evaluateBalance(input: EvaluationInput): Evaluation {
  const { settings, model, current, loads } = input;
  // The trigger's hysteresis runs on the current plan's worst layer.
  const usable = current !== null && loads !== null && loadShapeProblem(loads, model) === null &&
    sameBackends(current.backends, input.backends);
  let worst: number | null = null;
  if (usable) {
    try {
      worst = worstLayer(current, loads);
    } catch {
      worst = null;
    }
  }
  const trigger = nextTrigger(input.trigger, worst, settings.threshold);
  const decision = decideRebalance({
    enabled: settings.enabled,
    strategy: settings.strategy,
    threshold: settings.threshold,
    pinned: input.pinned,
    current,
    loads,
    model,
    backends: input.backends,
    redundancy: settings.redundancy,
    ...(input.budgets !== undefined ? { budgets: input.budgets } : {}),
    armed: trigger.armed,
    sinceLastSwitchMs: input.lastSwitchAt === null ? null : input.now - input.lastSwitchAt,
    adjustIntervalMs: settings.adjust_interval,
    ...(settings.switch_gain !== undefined ? { switchGain: settings.switch_gain } : {}),
    ...(input.placement !== undefined ? { placement: input.placement } : {}),
  });
  return { trigger, worst, decision };
}
