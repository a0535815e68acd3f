/**
 * @module Types of the `Balancer` adapter: its options and settings, the
 * decision records `GET /api/plan` lists, switch and preview results, and its error.
 */
import type { Logger } from "../../../shared/logger.ts";
import type { PlanBackend } from "../../../shared/placement_plan.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { PlanClient } from "./plan_client.ts";
import type { PlanAdoption } from "./plan_adoption.ts";
import type { PlanReconciler } from "./plan_reconciler.ts";
import type { PlanStore } from "./plan_store.ts";
import type { BackendBudget } from "./budget_slots.ts";
import type { BalancerStrategy, ModelShape, RebalanceDecision } from "./rebalancer.ts";
import type { PlacementCosts } from "../load/cost_window.ts";
import type { PlacementKind, PlacementMode } from "./placement_choice.ts";

/** The `expert_balancer` settings the balancer reads (the resolved config block fits). */
export interface BalancerSettings {
  enabled: boolean;
  strategy: BalancerStrategy;
  threshold: number;
  /** At most one switch per this many milliseconds, unless the gain is `switch_gain`. */
  adjust_interval: number;
  /** Milliseconds between ticks (evaluations); default `adjust_interval`. */
  evaluate_interval?: number;
  /** Worst-layer gain that switches within `adjust_interval`; default never. */
  switch_gain?: number;
  redundancy: number;
  /**
   * `expert_balancer.placement`: weigh full replication against expert parallelism
   * (`placement_choice.ts`); default `auto`.
   */
  placement?: PlacementMode;
}

/** Options of {@linkcode Balancer}. */
export interface BalancerOptions {
  store: PlanStore;
  /** Plan calls to backends (stage, activate, release). */
  client: Pick<PlanClient, "stage" | "activate" | "release">;
  logger: Logger;
  clock: Clock;
  settings: BalancerSettings;
  /** Observed load of `model`: `[layers][logical experts]` tokens/s, or null when unknown. */
  loadSource: (model: string) => number[][] | null;
  /** Pool members in slot order (configured members, healthy or not). */
  backends: () => PlanBackend[];
  /**
   * Each backend's memory budget by id, from its latest load report (a backend missing has
   * not reported yet); absent: every backend unlimited.
   */
  budgets?: () => ReadonlyMap<string, BackendBudget>;
  /** The remote-row and expert-row costs now (`control/load/cost_window.ts`); default assumed. */
  costs?: () => PlacementCosts;
  /** The served model's shape, or null before any backend described it. */
  modelShape: () => ModelShape | null;
  /** Decisions kept for the API; default 20. */
  decisionsKept?: number;
  /** Repairs backends that drifted off the current plan ({@linkcode Balancer.reconcile}). */
  reconciler?: PlanReconciler;
  /** With no current plan in KV, adopts the newest plan the backends run (before any static one). */
  adoption?: PlanAdoption;
}

/** Who a plan decision is for (the audit trail names it). */
export type DecisionTrigger = "balancer" | "prewarm" | "admin";

/** How a decision ended. */
export type DecisionOutcome =
  | "kept"
  | "switched"
  | "stage_failed"
  | "conflict"
  | "activate_partial"
  /** The KV had no current plan; the newest plan the backends run was made current. */
  | "adopted"
  | "error";

/** One decision, as `GET /api/plan` lists it. */
export interface DecisionRecord {
  at: number;
  /** Who switched: the balancer's own evaluation, the pre-warm job, or an operator. */
  trigger: DecisionTrigger;
  model: string | null;
  action: RebalanceDecision["action"] | "apply" | "restore" | "adopt";
  reason: string;
  outcome: DecisionOutcome;
  /** Version created for the switch, if any. */
  version: number | null;
  /** Predicted pool balancedness before and after. */
  before: number | null;
  after: number | null;
  /** Experts backends had to newly load. */
  moved: number | null;
  /** Their bytes (each backend's reported expert bytes); absent when not switched. */
  bytes?: number | null;
  /** The placement kind weighed, in brief (the whole analysis: `Balancer.placement()`). */
  placement?: PlacementBrief;
  /** What went wrong, for failed outcomes. */
  error?: string;
}

/** A placement choice in brief, for decision records and their log lines. */
export interface PlacementBrief {
  choice: PlacementKind;
  /** The remote-row cost it weighed (ms) and where that came from. */
  remoteRowMs: number;
  remoteRowSource: "measured" | "assumed";
  /** Predicted relative gain of the busiest backend's work by full replication; null: n/a. */
  gain: number | null;
}

/** Result of a successful switch. */
export interface SwitchResult {
  version: number;
  previous: number | null;
  reason: string;
  moved: number;
  predicted: { before: number | null; after: number | null };
  /** Backends that have not activated yet (retried every tick). */
  pendingActivation: string[];
}

/** Result of {@linkcode Balancer.preview}. */
export interface PlanPreview {
  model: string;
  /** `balancedness`: the pool's; `worstLayer`: the worst layer's (what the balancer judges). */
  current: { version: number | null; balancedness: number | null; worstLayer?: number | null };
  proposed: {
    phy2log: number[][];
    slotsPerBackend: number;
    balancedness: number;
    worstLayer?: number;
  };
  moved: number;
}

/** A request the balancer refuses; `kind` maps to an HTTP status in the admin routes. */
export class BalancerError extends Error {
  readonly kind: "invalid" | "conflict" | "not_found" | "unavailable";

  constructor(kind: BalancerError["kind"], message: string) {
    super(message);
    this.name = "BalancerError";
    this.kind = kind;
  }
}
