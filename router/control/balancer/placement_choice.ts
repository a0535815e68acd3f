/**
 * @module Which kind of placement the pool should run, pure: **full replication** (every
 * backend hosts every expert: no hops, even work under any entry routing) or **expert
 * parallelism** (experts spread over the backends, hot ones replicated: `eplb_planner.ts`).
 *
 * Design.
 * - Idea: full replication is only possible when every expert fits on every backend
 *   (`backend.memory_budget_mb`, `budget_slots.ts`); when it fits it is worth it when the
 *   hops it removes cost more than the switch — the cost model (`placement_cost.ts`)
 *   predicts each backend's work per second, execution plus hops at the measured cost of
 *   a remote row, and the plan whose busiest backend works less serves more.
 * - Rules, first match wins (`expert_balancer.placement`, default `auto`):
 *   1. one backend → expert parallelism (it hosts every expert either way);
 *   2. `expert_parallel` → expert parallelism;
 *   3. full replication does not fit (a budget too small, or not reported yet) → expert
 *      parallelism, naming the budget;
 *   4. the plan in force is full replication → keep it;
 *   5. `full_replication` → full replication;
 *   6. no plan yet → full replication when the model predicts any gain (with no load
 *      observed, on an even load: then hops are the whole difference);
 *   7. no load observed → keep the plan in force;
 *   8. predicted gain (busiest backend's work, expert parallelism → full replication)
 *      below {@linkcode MIN_PLACEMENT_GAIN} → keep expert parallelism;
 *   9. moving the weights (the busiest loader's new experts × expert bytes at
 *      {@linkcode ASSUMED_LOAD_BYTES_PER_MS}) would take longer to pay back
 *      (load time ÷ work saved per second) than `adjust_interval` → keep; else switch.
 * - Full replication is a plan like any other (a version in KV, staged and activated,
 *   reconciled, within budgets), so backends take their all-local path and the rest of
 *   the machinery keeps working; `strategy: off` (no plan at all) stays what it was.
 */
import {
  hostedExperts,
  type PlacementPlan,
  type PlanBackend,
} from "../../../shared/placement_plan.ts";
import type { CostEstimate, PlacementCosts } from "../load/cost_window.ts";
import { type BackendBudget, slotsWithin } from "./budget_slots.ts";
import {
  fullReplicationFit,
  fullReplicationPlan,
  isFullReplication,
  type PlanCost,
  planCost,
} from "./placement_cost.ts";
import type { ModelShape, UnversionedPlan } from "./rebalancer.ts";

/** `expert_balancer.placement`. */
export type PlacementMode = "auto" | "expert_parallel" | "full_replication";

/** The two kinds of placement. */
export type PlacementKind = "expert_parallel" | "full_replication";

/** A switch must predict at least this relative gain of the busiest backend's work. Assumed. */
export const MIN_PLACEMENT_GAIN = 0.05;

/**
 * Bytes per ms a backend loads expert weights at when staging a plan. Assumed: ~1 GB/s,
 * ONNX session creation from a local disk (the simulator's demo scale assumes the same).
 */
export const ASSUMED_LOAD_BYTES_PER_MS = 1e6;

/** Input of {@linkcode choosePlacement}. */
export interface PlacementChoiceInput {
  mode: PlacementMode;
  model: ModelShape;
  backends: readonly PlanBackend[];
  /** Budgets by backend id; a backend missing has not reported one yet. */
  budgets: ReadonlyMap<string, BackendBudget>;
  /** The plan in force, or null when there is none (or it must be replaced). */
  current: PlacementPlan | null;
  /** The expert-parallel plan to compare with: the current one, or the one to start with. */
  expertParallel: UnversionedPlan | PlacementPlan;
  /** Observed load `[layers][experts]` rows/s; null or all zero: none observed. */
  loads: readonly (readonly number[])[] | null;
  costs: PlacementCosts;
  adjustIntervalMs: number;
}

/** One candidate's predicted work. */
export interface CandidateCost {
  kind: PlacementKind;
  /** Plan version, when it is a stored plan. */
  version: number | null;
  slotsPerBackend: number;
  /** Busiest backend's work (ms per s) and mean ÷ max of work, hops included. */
  bottleneckMs: number;
  balancedness: number;
  /** Σ over backends of hop work (ms per s), and the share of expert rows that cross. */
  hopMs: number;
  remoteShare: number;
}

/** Weights a switch to the chosen placement makes backends load. */
export interface MoveCost {
  /** (layer, backend, expert) hostings added. */
  experts: number;
  bytes: number;
  /** Load time of the busiest loader at the assumed rate (s). */
  seconds: number;
  /** Load time ÷ work saved per second (s); null when nothing is saved. */
  paybackS: number | null;
}

/** The choice, its inputs and what it predicts. */
export interface PlacementAnalysis {
  mode: PlacementMode;
  choice: PlacementKind;
  /** `switch`: move the plan in force to full replication now; `wait`: budgets unknown. */
  action: "keep" | "switch" | "wait";
  reason: string;
  fits: { fullReplication: boolean; reason: string | null };
  inputs: {
    backends: number;
    layers: number;
    experts: number;
    /** Slots per backend and layer of each kind (full replication: every expert). */
    slots: { expertParallel: number; fullReplication: number };
    budgets: {
      backend: string;
      budgetBytes: number | null;
      expertBytes: number | null;
      /** Experts per layer the budget holds; null: unlimited or unknown. */
      slots: number | null;
    }[];
    remoteRow: PlacementCosts["remoteRow"];
    expertRow: CostEstimate;
    loadBytesPerMs: { value: number; source: "assumed"; detail: string };
    /** `observed`, or `even` (none observed: each expert the same). */
    load: "observed" | "even";
  };
  current: CandidateCost | null;
  expertParallel: CandidateCost;
  /** Null with one backend. */
  fullReplication: CandidateCost | null;
  /** 1 − full replication's busiest work ÷ expert parallelism's; null without both. */
  gain: number | null;
  /** Of switching the plan in force to full replication; null when not applicable. */
  move: MoveCost | null;
}

/** Chooses between full replication and expert parallelism; see the module doc. */
export function choosePlacement(input: PlacementChoiceInput): PlacementAnalysis {
  const { model, backends, costs } = input;
  const observed = input.loads !== null && input.loads.some((row) => row.some((v) => v > 0));
  const loads = observed
    ? input.loads!
    : Array.from({ length: model.layers }, () => new Array<number>(model.experts).fill(1));
  const rowCosts = { expertRowMs: costs.expertRow.ms, remoteRowMs: costs.remoteRow.ms };
  const full = fullReplicationPlan(model, backends, "full replication");
  const fit = fullReplicationFit(model, backends, input.budgets);
  const ep = candidate("expert_parallel", input.expertParallel, loads, rowCosts);
  const fr = backends.length >= 2 ? candidate("full_replication", full, loads, rowCosts) : null;
  const current = input.current === null ? null : candidate(
    isFullReplication(input.current, model.experts) ? "full_replication" : "expert_parallel",
    input.current,
    loads,
    rowCosts,
  );
  const gain = fr !== null && ep.bottleneckMs > 0 ? 1 - fr.bottleneckMs / ep.bottleneckMs : null;
  const move = input.current === null || fr === null || current?.kind === "full_replication"
    ? null
    : moveCost(input.current, full, input.budgets, ep.bottleneckMs - fr.bottleneckMs);
  const base = {
    mode: input.mode,
    fits: { fullReplication: fit.fits, reason: fit.fits ? null : fit.reason },
    inputs: analysisInputs(input, observed),
    current,
    expertParallel: ep,
    fullReplication: fr,
    gain,
    move,
  };
  return { ...base, ...placementVerdict(input, { observed, fit, ep, fr, current, gain, move }) };
}

/** The choice, the action and why, by the module doc's rules. */
type PlacementVerdict = Pick<PlacementAnalysis, "choice" | "action" | "reason">;

/** What the rules weigh: the candidates' costs, whether full replication fits, the move. */
interface Weighed {
  /** Whether expert load was observed (else an even load was assumed). */
  observed: boolean;
  fit: ReturnType<typeof fullReplicationFit>;
  ep: CandidateCost;
  fr: CandidateCost | null;
  current: CandidateCost | null;
  gain: number | null;
  move: MoveCost | null;
}

/** Rules 1–9 of the module doc over what was weighed. */
function placementVerdict(input: PlacementChoiceInput, weighed: Weighed): PlacementVerdict {
  const { model, costs } = input;
  const { observed, fit, ep, fr, current, gain, move } = weighed;
  const parallel = (action: "keep" | "wait", reason: string): PlacementVerdict => ({
    choice: "expert_parallel",
    action,
    reason: `expert parallelism: ${reason}`,
  });
  const replicate = (action: "keep" | "switch", reason: string): PlacementVerdict => ({
    choice: "full_replication",
    action,
    reason: `full replication: ${reason}`,
  });
  // Rules 1–3: full replication is not an option.
  if (fr === null) return parallel("keep", "one backend hosts every expert either way");
  // Before the first plan, a backend whose budget is still unknown could be given more
  // slots than it holds: wait for its report, whatever the mode.
  const unknown = !fit.fits && fit.unknown.length > 0 && input.current === null;
  if (input.mode === "expert_parallel") {
    return parallel(unknown ? "wait" : "keep", "expert_balancer.placement is expert_parallel");
  }
  if (!fit.fits) {
    return parallel(unknown ? "wait" : "keep", `full replication does not fit: ${fit.reason}`);
  }
  // Rules 4–5: already there, or asked for.
  if (current?.kind === "full_replication") {
    return replicate(
      "keep",
      `version ${input.current!.version} hosts every expert on every backend`,
    );
  }
  const predicted = predictionText(ep, fr, costs);
  if (input.mode === "full_replication") {
    return replicate(
      "switch",
      `expert_balancer.placement is full_replication and it fits; ${predicted}`,
    );
  }
  // Rule 6: the first plan.
  if (input.current === null) {
    return gain !== null && gain > 0
      ? replicate(
        "switch",
        `every backend fits all ${model.experts} experts per layer; ${predicted}`,
      )
      : parallel("keep", `full replication predicts no gain; ${predicted}`);
  }
  // Rules 7–9: leave expert parallelism only for a gain that pays for the move.
  if (!observed) return parallel("keep", "no expert load observed yet to weigh a switch");
  if (gain === null || gain < MIN_PLACEMENT_GAIN) {
    return parallel(
      "keep",
      `full replication would gain ${pct(gain ?? 0)} < ${pct(MIN_PLACEMENT_GAIN)}; ${predicted}`,
    );
  }
  const interval = input.adjustIntervalMs / 1000;
  if (move !== null && move.paybackS !== null && move.paybackS > interval) {
    return parallel(
      "keep",
      `${moveText(move)} would pay back in ${move.paybackS.toFixed(0)} s > adjust_interval ` +
        `${interval.toFixed(0)} s; ${predicted}`,
    );
  }
  return replicate(
    "switch",
    `every backend fits all ${model.experts} experts per layer; ${predicted}` +
      (move === null
        ? ""
        : `; ${moveText(move)} pays back in ${(move.paybackS ?? 0).toFixed(1)} s`),
  );
}

/** The analysis' inputs: pool shape, slots, budgets, the costs weighed and their sources. */
function analysisInputs(input: PlacementChoiceInput, observed: boolean) {
  const { model, backends, costs } = input;
  return {
    backends: backends.length,
    layers: model.layers,
    experts: model.experts,
    slots: {
      expertParallel: input.expertParallel.slotsPerBackend,
      fullReplication: model.experts,
    },
    budgets: backends.map(({ id }) => budgetRow(id, input.budgets, model.layers)),
    remoteRow: costs.remoteRow,
    expertRow: costs.expertRow,
    loadBytesPerMs: {
      value: ASSUMED_LOAD_BYTES_PER_MS,
      source: "assumed" as const,
      detail: "~1 GB/s: ONNX session creation from a local disk",
    },
    load: observed ? "observed" as const : "even" as const,
  };
}

function candidate(
  kind: PlacementKind,
  plan: UnversionedPlan | PlacementPlan,
  loads: readonly (readonly number[])[],
  costs: { expertRowMs: number; remoteRowMs: number },
): CandidateCost {
  const cost: PlanCost = planCost(plan, loads, costs);
  return {
    kind,
    version: "version" in plan ? plan.version : null,
    slotsPerBackend: plan.slotsPerBackend,
    bottleneckMs: cost.bottleneckMs,
    balancedness: cost.balancedness,
    hopMs: cost.hopMs.reduce((a, b) => a + b, 0),
    remoteShare: cost.rowsPerS > 0 ? cost.remoteRowsPerS / cost.rowsPerS : 0,
  };
}

/** What moving from `from` to `to` loads, and how soon `savedMsPerS` pays it back. */
function moveCost(
  from: PlacementPlan,
  to: UnversionedPlan,
  budgets: ReadonlyMap<string, BackendBudget>,
  savedMsPerS: number,
): MoveCost {
  const versioned = { version: 1, createdAt: 0, ...to };
  let experts = 0;
  let bytes = 0;
  let busiest = 0;
  for (const backend of to.backends) {
    const before = hostedExperts(from, backend.id);
    let added = 0;
    hostedExperts(versioned, backend.id).forEach((layer, l) => {
      const had = new Set(before[l] ?? []);
      for (const expert of layer) if (!had.has(expert)) added++;
    });
    const own = added * (budgets.get(backend.id)?.expertBytes ?? 0);
    experts += added;
    bytes += own;
    busiest = Math.max(busiest, own);
  }
  const loadMs = busiest / ASSUMED_LOAD_BYTES_PER_MS;
  return {
    experts,
    bytes,
    seconds: loadMs / 1000,
    paybackS: savedMsPerS > 0 ? loadMs / savedMsPerS : null,
  };
}

function budgetRow(id: string, budgets: ReadonlyMap<string, BackendBudget>, layers: number) {
  const budget = budgets.get(id);
  const slots = budget === undefined ? Number.POSITIVE_INFINITY : slotsWithin(budget, layers);
  return {
    backend: id,
    budgetBytes: budget?.budgetBytes ?? null,
    expertBytes: budget === undefined || !(budget.expertBytes > 0) ? null : budget.expertBytes,
    slots: Number.isFinite(slots) ? slots : null,
  };
}

function predictionText(ep: CandidateCost, fr: CandidateCost, costs: PlacementCosts): string {
  const row = costs.remoteRow;
  return `busiest backend ${ms(ep.bottleneckMs)} → ${ms(fr.bottleneckMs)} ms/s ` +
    `(balancedness ${ep.balancedness.toFixed(3)} → ${fr.balancedness.toFixed(3)}, ` +
    `${pct(ep.remoteShare)} of rows crossing at ${ms(row.ms)} ms per remote row, ${row.source})`;
}

function moveText(move: MoveCost): string {
  return `loading ${move.experts} experts (${(move.bytes / 1048576).toFixed(1)} MiB, ` +
    `~${move.seconds.toFixed(1)} s)`;
}

function pct(share: number): string {
  return `${(share * 100).toFixed(1)} %`;
}

function ms(value: number): string {
  return value >= 100 ? value.toFixed(0) : value >= 1 ? value.toFixed(2) : value.toPrecision(2);
}
