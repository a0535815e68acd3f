/**
 * @module The balancer's pure decision: given the strategy, the current plan, the pin,
 * the live backends and the observed expert load, keep the plan, place statically, or
 * re-plan with {@linkcode planPlacement}.
 *
 * Design.
 * - Idea: a plan is only worth switching to when it is predicted to spread the *observed*
 *   load better **in its worst layer**. Plans are scored per layer with
 *   {@linkcode predictedBalance} (`perLayer`: mean ÷ max of the backends' loads in that
 *   layer); the score is the worst layer's — a mean over layers hid a hot layer (0.70)
 *   behind 0.85–0.88.
 * - Trigger with hysteresis ({@linkcode nextTrigger}): armed once the worst layer stayed
 *   below `threshold` for {@linkcode TRIGGER_CONFIRM} consecutive evaluations, disarmed
 *   once it is back at `threshold` + {@linkcode TRIGGER_HYSTERESIS} or above. Without a
 *   trigger state (`armed` absent) a plan below `threshold` counts as armed.
 * - Bounded switching: when the last switch was less than `adjust_interval` ago the
 *   balancer switches only if the worst layer is predicted to gain at least
 *   `switch_gain` (a large gain); otherwise it waits.
 * - Fewest replicas moved: every replica a backend must newly host costs an expert's weights
 *   on the wire. Besides the planner's full placement two cheaper candidates are scored
 *   ({@linkcode chooseProposal}): the current plan where only the layers below the trigger
 *   line (threshold, or threshold + hysteresis while armed above it) take the planner's
 *   placement ("partial"), and the current plan changed by the move-minimising planner
 *   (`incremental_planner.ts`) until every layer is within {@linkcode INCREMENTAL_SLACK} of
 *   the full plan's worst layer ("incremental"). The candidate moving the fewest replicas
 *   wins if it moves no more than the full plan and its worst layer is within
 *   {@linkcode PARTIAL_TOLERANCE} of the full plan's or at least threshold + hysteresis (the
 *   trigger would not fire on it); layers a candidate leaves alone keep their executables.
 * - Rules, first match wins:
 *   1. disabled or strategy `off` → none;
 *   2. no backends → none; slots per backend capped by every backend's memory budget
 *      (`budget_slots.ts`); when not even one replica per expert fits → none, `failed`;
 *   3. no current plan, its backends differ from the live pool (ids and urls, in order),
 *      it does not fit the model, or it holds more slots than a budget fits → `initial`
 *      with the static plan (this overrides a pin:
 *      a plan naming gone backends cannot be kept);
 *   4. pinned → none;
 *   5. strategy `static` → none, or `initial` when the current plan is not the static one;
 *   6. no usable load (absent, wrong shape, all zero) → none;
 *   7. not armed (worst layer ≥ threshold, or not yet confirmed) → none;
 *   8. planned worst layer > current → go on, else none; in the hysteresis band (armed,
 *      current worst layer ≥ threshold) it must gain at least {@linkcode TRIGGER_HYSTERESIS}
 *      (smaller gains are noise; at threshold + hysteresis ≥ 1 the trigger never disarms
 *      and every interval would move weights for nothing);
 *   9. last switch < `adjust_interval` ago and gain < `switch_gain` → none (held; checked
 *      before planning when even a perfect plan, worst layer 1, could not gain
 *      `switch_gain`, so a held evaluation is cheap then); else `rebalance`.
 * - Knobs: `threshold`, `redundancy` (spare slots per backend, {@linkcode slotsPerBackend}).
 */
import type { ModelMetadata } from "../../../shared/oip.ts";
import {
  type PlacementPlan,
  type PlanBackend,
  planProblem,
  staticPlan,
} from "../../../shared/placement_plan.ts";
import { planPlacement } from "./eplb_planner.ts";
import { planIncrementally } from "./incremental_planner.ts";
import { type BackendBudget, limitSlots } from "./budget_slots.ts";
import type { PlacementCosts } from "../load/cost_window.ts";
import { choosePlacement, type PlacementAnalysis, type PlacementMode } from "./placement_choice.ts";
import { fullReplicationPlan, isFullReplication } from "./placement_cost.ts";
import {
  planFromPlacement,
  predictedBalance,
  replicasMoved,
  slotsPerBackend,
} from "./plan_math.ts";

/** What the balancer needs to know about a model. */
export interface ModelShape {
  name: string;
  layers: number;
  /** Routed experts per layer. */
  experts: number;
  /** Expert groups (group-limited routing); 1 when the model has none. */
  groups: number;
}

/** The model shape from a backend's model metadata (`parameters.layers/experts/groups`). */
export function modelShapeFromMetadata(metadata: ModelMetadata): ModelShape | null {
  const parameters = metadata.parameters ?? {};
  const positive = (value: unknown) =>
    typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
  const layers = positive(parameters["layers"]);
  const experts = positive(parameters["experts"]);
  if (layers === undefined || experts === undefined) return null;
  return { name: metadata.name, layers, experts, groups: positive(parameters["groups"]) ?? 1 };
}

/** A plan before the store gives it a version and a creation time. */
export type UnversionedPlan = Omit<PlacementPlan, "version" | "createdAt">;

/** The balancer strategies of `expert_balancer.strategy`. */
export type BalancerStrategy = "dynamic" | "static" | "off";

/** Input of {@linkcode decideRebalance}. */
export interface RebalanceInput {
  /** `expert_balancer.enabled`; default true. */
  enabled?: boolean;
  strategy: BalancerStrategy;
  /** Re-plan when the current plan's predicted pool balancedness falls below this. */
  threshold: number;
  /** Pinned version, or null. */
  pinned: number | null;
  current: PlacementPlan | null;
  /** `[layers][experts]` observed load (tokens/s), or null when none is known yet. */
  loads: readonly (readonly number[])[] | null;
  model: ModelShape;
  /** Live pool members, in slot order. */
  backends: readonly PlanBackend[];
  /** Spare slots per backend as a fraction of `experts / backends`. */
  redundancy: number;
  /** Each backend's memory budget by id (`budget_slots.ts`); absent: unlimited. */
  budgets?: ReadonlyMap<string, BackendBudget>;
  /** The trigger's state after this evaluation ({@linkcode nextTrigger}); absent: below = armed. */
  armed?: boolean;
  /** Milliseconds since the last switch (null: none yet); absent: never held. */
  sinceLastSwitchMs?: number | null;
  /** `expert_balancer.adjust_interval` (ms): at most one switch per interval… */
  adjustIntervalMs?: number;
  /** …unless the worst layer gains at least this (`expert_balancer.switch_gain`). */
  switchGain?: number;
  /**
   * Weigh full replication against expert parallelism (`placement_choice.ts`) with these
   * costs; absent: expert parallelism only (the simulator prices hops itself).
   */
  placement?: PlacementChoiceSettings;
}

/** What {@linkcode decideRebalance} needs to choose the kind of placement. */
export interface PlacementChoiceSettings {
  /** `expert_balancer.placement`. */
  mode: PlacementMode;
  costs: PlacementCosts;
  /**
   * Before the first plan, wait while a backend's memory budget is unknown (no load report
   * yet) rather than start expert-parallel; the balancer sets it for its first seconds.
   */
  waitForBudgets?: boolean;
}

/** Why a due rebalance (worst layer below the threshold) did not switch. */
export type HoldReason =
  /** Below the threshold, not yet for `TRIGGER_CONFIRM` evaluations. */
  | "confirming"
  /** The last switch was less than `adjust_interval` ago and the gain below `switch_gain`. */
  | "adjust_interval"
  /** An operator pinned the plan. */
  | "pinned"
  /** The planner finds no placement better enough than the current one. */
  | "no_better_plan"
  /** No plan can be made (e.g. the memory budgets cannot hold every expert once). */
  | "planning_failed";

/** Consecutive evaluations the worst layer must stay below the threshold to arm. */
export const TRIGGER_CONFIRM = 2;
/** The worst layer must be this far above the threshold to disarm. */
export const TRIGGER_HYSTERESIS = 0.05;
/** A partial plan may be this much worse in its worst layer than the full one. */
export const PARTIAL_TOLERANCE = 0.02;
/**
 * The move-minimising planner stops this far below the full re-plan's worst layer: the last
 * few thousandths cost many moves and drift away within minutes.
 */
export const INCREMENTAL_SLACK = 0.01;

/** The trigger's hysteresis state. */
export interface TriggerState {
  /** Consecutive evaluations with the worst layer below the threshold. */
  below: number;
  armed: boolean;
}

/** The trigger after one evaluation with worst-layer balancedness `worst`; pure. */
export function nextTrigger(
  state: TriggerState,
  worst: number | null,
  threshold: number,
): TriggerState {
  if (worst === null) return { below: 0, armed: state.armed };
  const below = worst < threshold ? state.below + 1 : 0;
  const armed = state.armed ? worst < threshold + TRIGGER_HYSTERESIS : below >= TRIGGER_CONFIRM;
  return { below, armed };
}

/** The worst layer's predicted balancedness of `plan` under `loads` (layers with load). */
export function worstLayer(
  plan: PlacementPlan,
  loads: readonly (readonly number[])[],
): number {
  const perLayer = predictedBalance(plan, loads).perLayer;
  const loaded = perLayer.filter((_, l) => loads[l]!.some((v) => v > 0));
  return loaded.length === 0 ? 1 : Math.min(...loaded);
}

/** What to do, why, and the predicted pool balancedness before and after. */
export interface RebalanceDecision {
  action: "none" | "initial" | "rebalance";
  reason: string;
  /** The plan to switch to (for `initial` and `rebalance`). */
  plan?: UnversionedPlan;
  /** Pool balancedness of the current and the new plan under the observed load, when known. */
  predicted: { before: number | null; after: number | null };
  /** Set when no plan can be made (the memory budgets cannot hold every expert once). */
  failed?: string;
  /** For `none`: why a rebalance that may be due waits, when that is the reason. */
  held?: HoldReason;
  /** The placement kind weighed (with {@linkcode RebalanceInput.placement}). */
  placement?: PlacementAnalysis;
}

/** Improvements smaller than this are noise, not a reason to move experts. */
const MIN_GAIN = 1e-9;

/** Decides whether to keep the plan, place statically, or re-plan; see the module doc. */
export function decideRebalance(input: RebalanceInput): RebalanceDecision {
  const weighed: { analysis?: PlacementAnalysis } = {};
  const decision = decide(input, weighed);
  return weighed.analysis === undefined ? decision : { ...decision, placement: weighed.analysis };
}

/** A decision to keep the plan, with why and (when known) its predicted balancedness. */
function none(reason: string, before: number | null = null, held?: HoldReason): RebalanceDecision {
  return {
    action: "none",
    reason,
    predicted: { before, after: null },
    ...(held ? { held } : {}),
  };
}

function decide(
  input: RebalanceInput,
  weighed: { analysis?: PlacementAnalysis },
): RebalanceDecision {
  const { current, model } = input;
  // Step 1: off.
  if (input.enabled === false) return none("balancer disabled (expert_balancer.enabled is false)");
  if (input.strategy === "off") return none("strategy off: every backend hosts every expert");
  // Step 2: nothing to place on.
  if (input.backends.length === 0) return none("no backends in the pool");
  // Step 2b: slots per backend within every memory budget (fewer replicas when tight).
  const limit = limitSlots(
    slotsPerBackend(model.experts, input.backends.length, input.redundancy),
    budgetOptions(input),
  );
  if (!limit.ok) {
    return {
      ...none(`cannot place experts: ${limit.reason}`, null, "planning_failed"),
      failed: limit.reason,
    };
  }
  const evaluation = evaluate(input, limit.slots, weighed);
  // Step 3: a plan that cannot be used as it is.
  const unusable = unusableReason(current, input) ?? overBudgetReason(current, input);
  if (unusable !== null) return initialDecision(evaluation, unusable);
  const plan = current!;
  return fixedDecision(evaluation, plan) ?? replanDecision(evaluation, plan);
}

/** What the steps past 2b of one evaluation share. */
interface Evaluation {
  input: RebalanceInput;
  /** The observed load, or null when it has none of the model's shape. */
  loads: readonly (readonly number[])[] | null;
  /** Why `loads` is null; null when it is not. */
  loadProblem: string | null;
  /** Slots per backend within every memory budget. */
  slots: number;
  /** Pool balancedness of `plan` under the observed load; null when unknown. */
  score(plan: UnversionedPlan | PlacementPlan | null): number | null;
  /** The static placement (built when needed: the balancer evaluates every few seconds). */
  fixed(): UnversionedPlan;
  /** Weighs full replication against `expertParallel` (`placement_choice.ts`). */
  analyse(plan: PlacementPlan | null, expertParallel: UnversionedPlan): PlacementAnalysis;
  /** Milliseconds since the last switch, and whether that is under `adjust_interval`. */
  since: number | null | undefined;
  interval: number;
  held: boolean;
}

/** The budget inputs of {@linkcode limitSlots} for the pool of `input`. */
function budgetOptions(input: RebalanceInput) {
  return {
    experts: input.model.experts,
    layers: input.model.layers,
    backends: input.backends.map((b) => b.id),
    budgets: input.budgets ?? new Map(),
  };
}

/** Why `current` holds more experts per backend than any memory budget fits; else null. */
function overBudgetReason(current: PlacementPlan | null, input: RebalanceInput): string | null {
  // What any plan may hold within the budgets (a full-replication plan exceeds `slots`).
  const budgetCap = limitSlots(Number.MAX_SAFE_INTEGER, budgetOptions(input));
  return current !== null && budgetCap.ok && current.slotsPerBackend > budgetCap.slots
    ? `version ${current.version} holds ${current.slotsPerBackend} experts per layer per ` +
      `backend, the memory budget of ${budgetCap.limitedBy} fits ${budgetCap.slots}`
    : null;
}

function evaluate(
  input: RebalanceInput,
  slots: number,
  weighed: { analysis?: PlacementAnalysis },
): Evaluation {
  const { model } = input;
  const loadProblem = loadShapeProblem(input.loads, model);
  const loads = loadProblem === null ? input.loads! : null;
  const choice = input.placement;
  // Static placement is contiguous blocks: never full replication, whatever `placement` says.
  const mode = input.strategy === "static" ? "expert_parallel" : choice?.mode;
  const since = input.sinceLastSwitchMs;
  const interval = input.adjustIntervalMs ?? 0;
  return {
    input,
    loads,
    loadProblem,
    slots,
    score: (plan) =>
      plan === null || loads === null || !hasLoad(loads)
        ? null
        : predictedBalance(asPlan(plan), loads).pool,
    fixed: () => staticPlacement(input, slots),
    analyse: (plan, expertParallel) =>
      weighed.analysis = choosePlacement({
        mode: mode!,
        model,
        backends: input.backends,
        budgets: input.budgets ?? new Map(),
        current: plan,
        expertParallel,
        loads: loadProblem === null ? loads : null,
        costs: choice!.costs,
        adjustIntervalMs: input.adjustIntervalMs ?? 0,
      }),
    since,
    interval,
    held: since !== undefined && since !== null && since < interval,
  };
}

/** Step 3: replace a plan that cannot be used as it is (`unusable` says why). */
function initialDecision(evaluation: Evaluation, unusable: string): RebalanceDecision {
  const { input, score } = evaluation;
  const { current, model, pinned } = input;
  const choice = input.placement;
  const pin = pinned === null ? "" : ` (drops the pin of version ${pinned})`;
  let initial = evaluation.fixed();
  let kind = "static placement";
  // Step 3b: or full replication, when it fits and the cost model prefers it.
  if (choice !== undefined) {
    const analysis = evaluation.analyse(null, initial);
    if (analysis.action === "wait" && choice.waitForBudgets) {
      return none(
        `${unusable}: waiting for every backend's memory budget before the first ` +
          `plan (${analysis.reason})`,
      );
    }
    if (analysis.choice === "full_replication") {
      kind = analysis.reason;
      initial = fullReplicationPlan(model, input.backends, "full replication");
    } else {
      kind = `static placement (${analysis.reason})`;
    }
  }
  return {
    action: "initial",
    reason: `${unusable}: ${kind}${pin}`,
    plan: { ...initial, reason: kind.startsWith("full") ? "full replication" : initial.reason },
    predicted: {
      before: current !== null && planProblem(current, model) === null ? score(current) : null,
      after: score(initial),
    },
  };
}

/**
 * Steps 4–5b: the plan is pinned, or placed by rule rather than by load (static placement,
 * full replication); null when the load decides (steps 6–9).
 */
function fixedDecision(evaluation: Evaluation, plan: PlacementPlan): RebalanceDecision | null {
  const { input, score, fixed } = evaluation;
  const { model, pinned } = input;
  const choice = input.placement;
  // Step 4: the operator holds the plan.
  if (pinned !== null) return none(`pinned to version ${pinned}`, score(plan), "pinned");
  // Step 4b: full replication although expert_balancer.placement says expert_parallel.
  if (choice?.mode === "expert_parallel" && isFullReplication(plan, model.experts)) {
    const initial = fixed();
    return {
      action: "initial",
      reason: `expert_balancer.placement is expert_parallel but version ${plan.version} ` +
        "replicates every expert: static placement",
      plan: initial,
      predicted: { before: score(plan), after: score(initial) },
    };
  }
  // Step 5: static placement never moves.
  if (input.strategy === "static") {
    const initial = fixed();
    if (samePlacement(plan, initial)) return none("strategy static: placement stays fixed");
    return {
      action: "initial",
      reason: `strategy static: version ${plan.version} is not the static placement`,
      plan: initial,
      predicted: { before: score(plan), after: score(initial) },
    };
  }
  // Step 5b: full replication or expert parallelism (`placement_choice.ts`).
  if (choice === undefined || input.strategy !== "dynamic") return null;
  // Compared with the plan in force, or (running full replication) the static placement.
  const analysis = evaluation.analyse(
    plan,
    isFullReplication(plan, model.experts) ? fixed() : plan,
  );
  if (analysis.choice !== "full_replication") return null;
  if (analysis.action !== "switch") return none(analysis.reason, score(plan));
  const { since, interval } = evaluation;
  if (evaluation.held) {
    return none(
      `held: last switch ${(since! / 1000).toFixed(1)} s ago < adjust_interval ${
        (interval / 1000).toFixed(0)
      } s; ${analysis.reason}`,
      score(plan),
      "adjust_interval",
    );
  }
  const full = fullReplicationPlan(model, input.backends, analysis.reason);
  return {
    action: "rebalance",
    reason: analysis.reason,
    plan: full,
    predicted: { before: score(plan), after: score(full) },
  };
}

/** Steps 6–9: re-plan on the observed load when the worst layer asks for it. */
function replanDecision(evaluation: Evaluation, plan: PlacementPlan): RebalanceDecision {
  const { input, loads, since, interval } = evaluation;
  // Step 6: nothing observed to plan on.
  if (loads === null) return none(`no usable expert load: ${evaluation.loadProblem}`);
  if (!hasLoad(loads)) return none("no expert load observed yet");
  // Step 7: good enough, or not confirmed yet (hysteresis).
  const before = worstLayer(plan, loads);
  const armed = input.armed ?? before < input.threshold;
  if (!armed) {
    const why = before >= input.threshold
      ? `worst layer balancedness ${fmt(before)} ≥ threshold ${fmt(input.threshold)}`
      : `worst layer balancedness ${fmt(before)} < threshold ${
        fmt(input.threshold)
      }, confirming (${TRIGGER_CONFIRM} evaluations)`;
    return none(
      `${why} (version ${plan.version})`,
      before,
      before < input.threshold ? "confirming" : undefined,
    );
  }
  // Step 9 early, without planning: held, and no plan can gain switch_gain (after ≤ 1).
  const large = input.switchGain ?? Number.POSITIVE_INFINITY;
  if (evaluation.held && 1 - before < large) {
    return heldDecision(since!, interval, `at most ${fmt(1 - before)}`, large, before, null);
  }
  // In the hysteresis band (armed, worst layer back at or above threshold) a switch must gain
  // at least the band's width: smaller predicted gains are within the window's noise, and
  // each switch moves weights (at threshold + hysteresis ≥ 1 the trigger never disarms).
  const inBand = before >= input.threshold;
  const minGain = inBand ? TRIGGER_HYSTERESIS : MIN_GAIN;
  const bandText = `worst layer balancedness ${fmt(before)} ≥ threshold ${
    fmt(input.threshold)
  } (armed until ${fmt(input.threshold + TRIGGER_HYSTERESIS)})`;
  if (inBand && 1 - before < minGain) {
    return none(`${bandText}: no plan can gain ${fmt(minGain)}`, before, "no_better_plan");
  }
  return replanOnLoad(evaluation, plan, { loads, before, large, bandText });
}

/** Steps 8–9: the re-plan, and whether it gains enough to switch now. */
function replanOnLoad(
  evaluation: Evaluation,
  plan: PlacementPlan,
  worst: {
    loads: readonly (readonly number[])[];
    /** The plan's worst layer now. */
    before: number;
    /** `switch_gain`: a gain that switches within `adjust_interval`. */
    large: number;
    /** The reason's text when `before` is in the hysteresis band. */
    bandText: string;
  },
): RebalanceDecision {
  const { input, since, interval } = evaluation;
  const { loads, before, large, bandText } = worst;
  const inBand = before >= input.threshold;
  const minGain = inBand ? TRIGGER_HYSTERESIS : MIN_GAIN;
  // Step 8: re-plan on the observed load — every layer, or only those that need it.
  const perLayer = predictedBalance(plan, loads).perLayer;
  const line = perLayer.some((b) => b < input.threshold)
    ? input.threshold
    : input.threshold + TRIGGER_HYSTERESIS;
  const needy = perLayer.flatMap((b, l) => b < line && loads[l]!.some((v) => v > 0) ? [l] : []);
  const layersText = `layer${needy.length === 1 ? "" : "s"} ${needy.join(", ")}`;
  const full = proposePlacement(loads, {
    model: input.model,
    backends: input.backends,
    redundancy: input.redundancy,
    slots: evaluation.slots,
    reason: `rebalance: worst layer ${fmt(before)} < ${fmt(line)} (${layersText})`,
  });
  const proposal = chooseProposal(plan, full, needy, loads, {
    layersText,
    good: input.threshold + TRIGGER_HYSTERESIS,
  });
  const proposed = proposal.plan;
  const after = worstLayer(asPlan(proposed), loads);
  if (after <= before + MIN_GAIN || (inBand && after - before < minGain)) {
    return {
      action: "none",
      held: "no_better_plan",
      reason: inBand
        ? `${bandText}: the planned ${fmt(after)} gains less than ${fmt(minGain)}`
        : `worst layer balancedness ${fmt(before)} < ${fmt(line)}, but the planned ` +
          `placement would reach only ${fmt(after)}`,
      predicted: { before, after },
    };
  }
  // Step 9: at most one switch per adjust_interval unless the gain is large.
  const gain = after - before;
  if (evaluation.held && gain < large) {
    return heldDecision(since!, interval, fmt(gain), large, before, after);
  }
  return {
    action: "rebalance",
    reason: `${
      inBand
        ? bandText
        : `worst layer balancedness ${fmt(before)} < threshold ${fmt(input.threshold)}`
    } (${layersText}); planned ${fmt(after)}${proposalText(proposal)}`,
    plan: proposed,
    predicted: { before, after },
  };
}

/** "Held": switched `since` ms ago (< `interval`) and the gain is < `large`. */
function heldDecision(
  since: number,
  interval: number,
  gain: string,
  large: number,
  before: number,
  after: number | null,
): RebalanceDecision {
  return {
    action: "none",
    held: "adjust_interval",
    reason: `held: last switch ${(since / 1000).toFixed(1)} s ago < adjust_interval ${
      (interval / 1000).toFixed(0)
    } s and gain ${gain} < switch_gain ${fmt(large)} (worst layer ${fmt(before)}${
      after === null ? ", not planned" : ` → ${fmt(after)}`
    })`,
    predicted: { before, after },
  };
}

/** The plan {@linkcode chooseProposal} picks, how it was made, and the replicas it moves. */
export interface Proposal {
  plan: UnversionedPlan;
  kind: "full" | "partial" | "incremental";
  /** Hostings the plan adds to the current one ({@linkcode replicasMoved}). */
  moved: number;
}

/** How a proposal differs from the full re-plan, for the decision's reason. */
function proposalText(proposal: Proposal): string {
  if (proposal.kind === "full") return "";
  if (proposal.kind === "partial") return " re-placing only those";
  return ` moving ${proposal.moved} replica${proposal.moved === 1 ? "" : "s"}`;
}

/**
 * The plan to switch to. Candidates: the current plan with only the `needy` layers taken
 * from `full` ("partial"), and the current plan with the fewest replicas moved to bring
 * every layer within {@linkcode INCREMENTAL_SLACK} of `full`'s worst layer
 * ("incremental", {@linkcode planIncrementally}). Of those whose worst layer is within
 * {@linkcode PARTIAL_TOLERANCE} of `full`'s or at least `good`, and that move no more
 * replicas than `full`, the one moving the fewest; else `full`.
 */
export function chooseProposal(
  current: PlacementPlan,
  full: UnversionedPlan,
  needy: readonly number[],
  loads: readonly (readonly number[])[],
  options: { layersText: string; good: number },
): Proposal {
  let best: Proposal = { plan: full, kind: "full", moved: replicasMoved(current, asPlan(full)) };
  if (needy.length === 0 || current.slotsPerBackend !== full.slotsPerBackend) return best;
  const worstFull = worstLayer(asPlan(full), loads);
  const bar = Math.min(worstFull - PARTIAL_TOLERANCE, options.good);
  const offer = (plan: UnversionedPlan, kind: Proposal["kind"]) => {
    const moved = replicasMoved(current, asPlan(plan));
    if (moved <= best.moved && worstLayer(asPlan(plan), loads) >= bar) {
      best = { plan, kind, moved };
    }
  };
  const incremental = planIncrementally(
    loads,
    current.layers.map((layer) => layer.phy2log),
    current.slotsPerBackend,
    { goal: worstFull - INCREMENTAL_SLACK },
  );
  offer({
    ...full,
    // Layers the moves left alone keep the current layer (and its replica weights).
    layers: incremental.phy2log.map((phy2log, l) => {
      const before = current.layers[l]!;
      return phy2log.every((expert, slot) => expert === before.phy2log[slot])
        ? before
        : { phy2log };
    }),
    reason: `${full.reason}; ${incremental.moves} replicas moved from version ${current.version}`,
  }, "incremental");
  if (needy.length < full.layers.length) {
    offer({
      ...full,
      layers: full.layers.map((layer, l) => needy.includes(l) ? layer : current.layers[l]!),
      reason: `${full.reason}; only ${options.layersText} re-placed`,
    }, "partial");
  }
  return best;
}

/** Options of {@linkcode proposePlacement}. */
export interface ProposePlacementOptions {
  model: ModelShape;
  backends: readonly PlanBackend[];
  redundancy: number;
  /** Slots per backend (within the memory budgets); default from `redundancy`. */
  slots?: number;
  reason: string;
}

/**
 * The planner's placement for `loads` on `backends`: `B · slotsPerBackend` replicas, one
 * node, one "GPU" per backend, the model's groups when they divide the experts.
 */
export function proposePlacement(
  loads: readonly (readonly number[])[],
  options: ProposePlacementOptions,
): UnversionedPlan {
  const { model, backends } = options;
  const perBackend = options.slots ??
    slotsPerBackend(model.experts, backends.length, options.redundancy);
  const groups = model.groups >= 1 && model.experts % model.groups === 0 ? model.groups : 1;
  const placement = planPlacement({
    weight: loads.map((row) => [...row]),
    num_replicas: backends.length * perBackend,
    num_groups: groups,
    num_nodes: 1,
    num_gpus: backends.length,
  });
  const { version: _version, createdAt: _createdAt, ...plan } = planFromPlacement(placement, {
    model: model.name,
    version: 1,
    backends: [...backends],
    reason: options.reason,
    now: 0,
  });
  return plan;
}

/** Why `current` cannot stay as it is (absent, other backends, wrong shape), or null. */
function unusableReason(current: PlacementPlan | null, input: RebalanceInput): string | null {
  if (current === null) return "no plan yet";
  if (!sameBackends(current.backends, input.backends)) {
    const ids = (list: readonly PlanBackend[]) => list.map((b) => b.id).join(", ");
    return `backends changed from [${ids(current.backends)}] to [${ids(input.backends)}]`;
  }
  const problem = planProblem(current, input.model);
  if (problem !== null) return `version ${current.version} does not fit the model: ${problem}`;
  return null;
}

function staticPlacement(input: RebalanceInput, slots: number): UnversionedPlan {
  const { version: _version, createdAt: _createdAt, ...plan } = staticPlan({
    model: input.model.name,
    layers: input.model.layers,
    experts: input.model.experts,
    backends: input.backends.map(({ id, url }) => ({ id, url })),
    slotsPerBackend: slots,
  });
  return { ...plan, reason: "static placement" };
}

/** Whether two backend lists name the same ids and urls in the same order. */
export function sameBackends(a: readonly PlanBackend[], b: readonly PlanBackend[]): boolean {
  return a.length === b.length && a.every((x, i) => x.id === b[i]!.id && x.url === b[i]!.url);
}

function samePlacement(a: UnversionedPlan, b: UnversionedPlan): boolean {
  return a.slotsPerBackend === b.slotsPerBackend && a.layers.length === b.layers.length &&
    a.layers.every((layer, l) => {
      const other = b.layers[l]!;
      return layer.replicaWeights === undefined && other.replicaWeights === undefined &&
        layer.phy2log.length === other.phy2log.length &&
        layer.phy2log.every((expert, slot) => expert === other.phy2log[slot]);
    });
}

/** Why `loads` cannot be planned on for `model`, or null when it can. */
export function loadShapeProblem(
  loads: readonly (readonly number[])[] | null,
  model: ModelShape,
): string | null {
  if (loads === null) return "none reported yet";
  if (loads.length !== model.layers) {
    return `load has ${loads.length} layers, model "${model.name}" has ${model.layers}`;
  }
  for (const [layer, row] of loads.entries()) {
    if (row.length !== model.experts) {
      return `load of layer ${layer} has ${row.length} experts, model "${model.name}" has ${model.experts}`;
    }
    const bad = row.findIndex((value) => !Number.isFinite(value) || value < 0);
    if (bad >= 0) return `load of layer ${layer}, expert ${bad} is ${row[bad]}, not a number ≥ 0`;
  }
  return null;
}

function hasLoad(loads: readonly (readonly number[])[]): boolean {
  return loads.some((row) => row.some((value) => value > 0));
}

function asPlan(plan: UnversionedPlan | PlacementPlan): PlacementPlan {
  return { version: 1, createdAt: 0, ...plan };
}

function fmt(value: number): string {
  return value.toFixed(3);
}
