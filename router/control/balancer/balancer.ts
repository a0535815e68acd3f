/**
 * @module The balancer adapter: every `adjust_interval` it reads the observed expert load,
 * the live backends and the current plan, asks {@linkcode decideRebalance}, and carries a
 * decision out with {@linkcode switchPlan} (stage → claim → activate → release). Admins
 * apply, preview and pin plans through the same path.
 *
 * Ticks and admin actions of one router run one at a time; across routers the atomic
 * claim in KV decides. Every decision is logged ("kept" at debug level) and the last few
 * are kept in memory for `GET /api/plan`.
 *
 * Scheduling is a timer re-armed after each tick on the injected clock, so ticks never
 * overlap and tests drive time; Deno.cron's one-minute granularity is too coarse. A tick
 * (an evaluation) runs every `evaluate_interval` (default 2 s) — detection is fast — and
 * the trigger's hysteresis state and the time of the last switch bound switching to one
 * per `adjust_interval` unless the gain is `switch_gain` ({@linkcode evaluateBalance},
 * the same pure step the simulator drives).
 *
 * Each evaluation also weighs full replication against expert parallelism
 * (`placement_choice.ts`) with the measured costs (`costs`), and keeps the analysis for
 * `GET /api/plan` ({@linkcode Balancer.placement}); {@linkcode Balancer.health} is the
 * EPLB health the metrics, the alert and the dashboard read (`rebalance_health.ts`).
 */
import type { PlacementPlan, PlanBackend } from "../../../shared/placement_plan.ts";
import type { TimerHandle } from "../../runtime/clock.ts";
import { planFromPhy2log, weightProblem } from "./_admin_plan.ts";
import {
  BalancerError,
  type BalancerOptions,
  type BalancerSettings,
  type DecisionOutcome,
  type DecisionRecord,
  type PlacementBrief,
  type PlanPreview,
  type SwitchResult,
} from "./balancer_types.ts";
import { assumedCosts } from "../load/cost_window.ts";
import type { BackendBudget } from "./budget_slots.ts";
import type { PlacementAnalysis } from "./placement_choice.ts";
import {
  type DueReason,
  type HealthSnapshot,
  RebalanceHealth,
  weightsMoved,
} from "./rebalance_health.ts";
import type { ReconcileResult, ReportedPlan } from "./plan_reconciler.ts";
import {
  poolBalanceOrNull,
  predictedBalance,
  replicasMoved,
  slotsPerBackend,
} from "./plan_math.ts";
import { limitSlots } from "./budget_slots.ts";
import {
  activateStagedPlan,
  completeActivation,
  type PendingActivation,
  type PlanSwitchDeps,
  type SwitchOutcome,
  switchPlan,
} from "./plan_switch.ts";
import {
  loadShapeProblem,
  type ModelShape,
  proposePlacement,
  sameBackends,
  type TriggerState,
  type UnversionedPlan,
  worstLayer,
} from "./rebalancer.ts";
import { evaluateBalance, type Evaluation, INITIAL_TRIGGER } from "./evaluate_balance.ts";

/**
 * For this long after start the first plan waits for every backend's memory budget (their
 * first load reports) before choosing between full replication and expert parallelism;
 * after it, a backend that never reported counts as not fitting everything.
 */
export const BUDGET_WAIT_MS = 15_000;

interface State {
  model: ModelShape;
  backends: PlanBackend[];
  current: PlacementPlan | null;
  pinned: number | null;
}

/** Plans and switches expert placement; see the module doc. */
export class Balancer {
  readonly #options: BalancerOptions;
  readonly #deps: PlanSwitchDeps;
  readonly #decisions: DecisionRecord[] = [];
  #queue: Promise<unknown> = Promise.resolve();
  #timer: TimerHandle | undefined;
  #running = false;
  /** Bumped by start(): a tick loop from before a stop() does not re-arm. */
  #generation = 0;
  #pending: PendingActivation | undefined;
  #trigger: TriggerState = INITIAL_TRIGGER;
  /** When the last switch (any trigger) happened; null: none since start. */
  #lastSwitchAt: number | null = null;
  #reconcileQueued = false;
  /** When the plan of `#pending` was decided (its switch's duration ends at activation). */
  #pendingSince: number | undefined;
  readonly #health: RebalanceHealth;
  #placement: PlacementAnalysis | undefined;
  readonly #startedAt: number;

  constructor(options: BalancerOptions) {
    this.#options = options;
    const { store, client, clock, logger } = options;
    this.#deps = { store, client, clock, logger };
    this.#health = new RebalanceHealth({ adjustIntervalMs: options.settings.adjust_interval });
    this.#startedAt = clock.now();
  }

  /** The last evaluation's choice between full replication and expert parallelism, or null. */
  placement(): PlacementAnalysis | null {
    return this.#placement ?? null;
  }

  /** EPLB health now: switches, their durations, weights moved, a due rebalance held. */
  health(): HealthSnapshot {
    return this.#health.snapshot(this.#options.clock.now());
  }

  /** Switch durations (s, decision → every backend active) after the first `cursor`. */
  switchDurationsSince(cursor: number): { values: number[]; cursor: number } {
    return this.#health.durationsSince(cursor);
  }

  /** The balancer settings in force. */
  get settings(): BalancerSettings {
    return this.#options.settings;
  }

  /** The served model's shape, or null. */
  modelShape(): ModelShape | null {
    return this.#options.modelShape();
  }

  /** The observed load of the served model, when it fits the model's shape. */
  observedLoads(): number[][] | null {
    const model = this.#options.modelShape();
    if (model === null) return null;
    const loads = this.#options.loadSource(model.name);
    return loadShapeProblem(loads, model) === null ? loads : null;
  }

  /** The last decisions, newest first. */
  decisions(): DecisionRecord[] {
    return [...this.#decisions].reverse();
  }

  /** Ticks now, then every `adjust_interval` until {@linkcode Balancer.stop}. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    void this.#scheduledTick(++this.#generation);
  }

  /** Stops ticking and waits for work in progress. */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer !== undefined) this.#options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#queue;
  }

  /**
   * Brings backends whose reported plan is not the current one back onto it (see
   * `plan_reconciler.ts`), one at a time with ticks and admin actions; at most one call
   * waits, later ones return `[]` at once. Off with the balancer (disabled, strategy off).
   */
  reconcile(reported: readonly ReportedPlan[]): Promise<ReconcileResult[]> {
    const { reconciler, settings } = this.#options;
    const model = this.#options.modelShape();
    if (
      reconciler === undefined || model === null || !settings.enabled ||
      settings.strategy === "off" || this.#reconcileQueued
    ) {
      return Promise.resolve([]);
    }
    this.#reconcileQueued = true;
    return this.#exclusive(() => {
      this.#reconcileQueued = false;
      return reconciler.reconcile(model.name, reported);
    });
  }

  /** One balancing round: decide, and switch when the decision says so. Never throws. */
  tick(): Promise<DecisionRecord> {
    return this.#exclusive(() => this.#tick());
  }

  /**
   * Switches to an operator's plan (`phy2log`, validated against the model) or, without
   * one, to the planner's placement for the observed load. Throws {@linkcode BalancerError},
   * or `PlanStageError` when backends fail to stage (nothing changes then).
   */
  apply(
    request: { phy2log?: number[][]; pin?: boolean } = {},
    trigger: "admin" | "prewarm" = "admin",
  ): Promise<SwitchResult> {
    return this.#exclusive(async () => {
      const state = await this.#state("apply plan", { needBackends: true });
      // `pin: true` applies and pins in one step (a pin held before moves to the new version).
      if (state.pinned !== null && !request.pin) {
        throw new BalancerError(
          "conflict",
          `Cannot apply plan: pinned to version ${state.pinned}; unpin it first`,
        );
      }
      const { model, backends } = state;
      let plan: UnversionedPlan;
      const slots = this.#slotLimit(model, backends, "apply plan");
      if (request.phy2log !== undefined) {
        const built = planFromPhy2log(request.phy2log, { model, backends });
        if (typeof built === "string") {
          throw new BalancerError("invalid", `Cannot apply plan: ${built}`);
        }
        // An operator's plan may use more slots than the planner's sizing (full
        // replication, say), never more than a budget holds.
        const fits = this.#slotLimit(model, backends, "apply plan", built.slotsPerBackend);
        if (built.slotsPerBackend > fits) {
          throw new BalancerError(
            "invalid",
            `Cannot apply plan: it holds ${built.slotsPerBackend} experts per layer per backend; ` +
              `the backends' memory budgets fit ${fits}`,
          );
        }
        plan = built;
      } else {
        const loads = this.observedLoads();
        if (loads === null || !loads.some((row) => row.some((v) => v > 0))) {
          throw new BalancerError(
            "conflict",
            "Cannot apply plan: no expert load observed yet; send phy2log instead",
          );
        }
        plan = proposePlacement(loads, {
          model,
          backends,
          redundancy: this.settings.redundancy,
          slots,
          reason: "admin apply: planned on observed load",
        });
      }
      const result = await this.#switch(plan, state, { action: "apply", trigger })
        .catch(rethrowCause);
      if (request.pin) await this.#options.store.pin(model.name, result.version);
      return result;
    });
  }

  /**
   * Activates `plan`, a version staged earlier (`stagePlan()`: the pre-warm job stages an
   * event's placement ahead and activates it when the event's traffic arrives), in turn
   * with ticks and admin actions. `beforeClaim` runs first in that turn: the job moves its
   * standby backends into the pool there, so no tick sees the pool and the plan disagree.
   * A backend that lost the staged version is staged again. Throws
   * {@linkcode BalancerError} when pinned, when the pool's backends are not the plan's, or
   * when another switch claimed first.
   */
  activateStaged(
    plan: PlacementPlan,
    options: { trigger?: "prewarm" | "admin"; beforeClaim?: () => void } = {},
  ): Promise<SwitchResult> {
    return this.#exclusive(async () => {
      options.beforeClaim?.();
      const action = `activate staged plan version ${plan.version}`;
      const state = await this.#state(action, { needBackends: true });
      if (state.pinned !== null) {
        throw new BalancerError(
          "conflict",
          `Cannot ${action}: pinned to version ${state.pinned}; unpin it first`,
        );
      }
      if (!sameBackends(plan.backends, state.backends)) {
        const ids = (list: readonly PlanBackend[]) => list.map((b) => `"${b.id}"`).join(", ");
        throw new BalancerError(
          "conflict",
          `Cannot ${action}: it places experts on ${ids(plan.backends)}; the pool has ${
            ids(state.backends)
          }`,
        );
      }
      return await this.#switch(
        plan,
        state,
        { action: "activate_staged", trigger: options.trigger ?? "prewarm" },
        () => activateStagedPlan(plan, state, this.#deps, { restage: true }),
      ).catch(rethrowCause);
    });
  }

  /**
   * Pins the plan to stored `version`. When it is not current, its placement is switched
   * to first as a new version (backends only ever see increasing versions) and that
   * version is pinned.
   */
  pin(version: number): Promise<{ pinned: number; restoredFrom: number | null }> {
    return this.#exclusive(async () => {
      const state = await this.#state("pin plan", { needBackends: true });
      const { model, backends, current } = state;
      if (current?.version === version) {
        await this.#options.store.pin(model.name, version);
        return { pinned: version, restoredFrom: null };
      }
      const old = await this.#options.store.get(model.name, version);
      if (old === null) {
        throw new BalancerError(
          "not_found",
          `Cannot pin plan: model "${model.name}" has no version ${version}`,
        );
      }
      if (!sameBackends(old.backends, backends)) {
        throw new BalancerError(
          "conflict",
          `Cannot pin plan: version ${version} places experts on backends the pool no longer has`,
        );
      }
      const { version: _version, createdAt: _createdAt, ...placement } = old;
      const restored = await this.#switch(
        { ...placement, reason: `restore of version ${version} (pinned)` },
        state,
        { action: "restore", trigger: "admin" },
      ).catch(rethrowCause);
      await this.#options.store.pin(model.name, restored.version);
      return { pinned: restored.version, restoredFrom: version };
    });
  }

  /** Removes the pin; returns the version that was pinned, or null. */
  unpin(): Promise<number | null> {
    return this.#exclusive(() => this.#options.store.unpin(this.#model("unpin plan").name));
  }

  /** The planner's placement for `weight` (default: the observed load) against the current plan. */
  async preview(weight?: number[][]): Promise<PlanPreview> {
    const model = this.#model("preview plan");
    const backends = this.#backends("preview plan");
    const loads = weight ?? this.observedLoads();
    if (loads === null) {
      throw new BalancerError(
        "conflict",
        "Cannot preview plan: no expert load observed yet; send weight instead",
      );
    }
    const problem = weightProblem(loads, model);
    if (problem !== null) throw new BalancerError("invalid", `Cannot preview plan: ${problem}`);
    const current = await this.#options.store.current(model.name);
    const plan = proposePlacement(loads, {
      model,
      backends,
      redundancy: this.settings.redundancy,
      slots: this.#slotLimit(model, backends, "preview plan"),
      reason: "preview",
    });
    const proposed: PlacementPlan = { ...plan, version: 1, createdAt: 0 };
    let currentWorst: number | null = null;
    if (current !== null) {
      try {
        currentWorst = worstLayer(current, loads);
      } catch {
        currentWorst = null;
      }
    }
    return {
      model: model.name,
      current: {
        version: current?.version ?? null,
        balancedness: current === null ? null : poolBalanceOrNull(current, loads),
        worstLayer: currentWorst,
      },
      proposed: {
        phy2log: plan.layers.map((layer) => layer.phy2log),
        slotsPerBackend: plan.slotsPerBackend,
        balancedness: predictedBalance(proposed, loads).pool,
        worstLayer: worstLayer(proposed, loads),
      },
      moved: replicasMoved(current, proposed),
    };
  }

  async #tick(): Promise<DecisionRecord> {
    const { clock } = this.#options;
    const model = this.#options.modelShape();
    const kept = keptRecord(model?.name ?? null);
    if (model === null) {
      return this.#record({ ...kept, at: clock.now(), reason: "model shape not known yet" });
    }
    // Whether a rebalance is due this evaluation (worst layer below threshold), once known.
    let due: { worst: number } | null = null;
    try {
      await this.#completePending();
      const state = await this.#state("rebalance");
      // An empty KV must not push a static plan over the placement the pool runs.
      const adopted = await this.#adoptRunning(model, state, kept);
      if (adopted !== null) return adopted;
      const evaluation = this.#evaluate(model, state);
      this.#trigger = evaluation.trigger;
      due = this.#dueOf(evaluation);
      const { decision } = evaluation;
      if (decision.placement !== undefined) this.#placement = decision.placement;
      const placement = brief(decision.placement);
      if (decision.action === "none" || decision.plan === undefined) {
        return this.#keep(decision, { kept, due, placement });
      }
      await this.#switch(
        { ...decision.plan, reason: `${decision.action}: ${decision.reason}` },
        state,
        {
          action: decision.action,
          trigger: "balancer",
          predicted: decision.predicted,
          ...(placement ? { placement } : {}),
        },
      );
      if (state.pinned !== null) {
        // Only an unusable plan (backends changed) overrides a pin; see decideRebalance.
        await this.#options.store.unpin(model.name);
        this.#options.logger.warn("plan pin dropped", {
          model: model.name,
          pinned: state.pinned,
          reason: decision.reason,
        });
      }
      return this.#decisions.at(-1)!;
    } catch (error) {
      return this.#tickFailed(error, { kept, due });
    }
  }

  /** Activation still pending from an earlier switch: retries the backends that missed it. */
  async #completePending(): Promise<void> {
    if (this.#pending === undefined) return;
    const backends = await completeActivation(this.#pending, this.#deps);
    this.#pending = backends.length === 0 ? undefined : { ...this.#pending, backends };
    if (this.#pending === undefined && this.#pendingSince !== undefined) {
      this.#health.activated(this.#options.clock.now() - this.#pendingSince);
      this.#pendingSince = undefined;
    }
  }

  /** With no current plan in KV, the newest plan the backends run, recorded; else null. */
  async #adoptRunning(
    model: ModelShape,
    state: State,
    kept: KeptRecord,
  ): Promise<DecisionRecord | null> {
    const adoption = this.#options.adoption;
    if (state.current !== null || adoption === undefined || state.backends.length === 0) {
      return null;
    }
    const adopted = await adoption.adopt(model, state.backends);
    if (adopted === null) return null;
    return this.#record({
      ...kept,
      at: this.#options.clock.now(),
      action: "adopt",
      outcome: "adopted",
      version: adopted.version,
      reason: `no current plan in KV: adopted version ${adopted.version} from the backends`,
    });
  }

  /** One evaluation of the load the balancer plans on (see {@linkcode evaluateBalance}). */
  #evaluate(model: ModelShape, state: State): Evaluation {
    const { settings, clock } = this.#options;
    const loads = this.#options.loadSource(model.name);
    return evaluateBalance({
      settings,
      trigger: this.#trigger,
      now: clock.now(),
      lastSwitchAt: this.#lastSwitchAt,
      model,
      backends: state.backends,
      current: state.current,
      pinned: state.pinned,
      loads,
      budgets: this.#budgets(),
      placement: {
        mode: settings.placement ?? "auto",
        costs: this.#options.costs?.() ?? assumedCosts(),
        waitForBudgets: clock.now() - this.#startedAt < BUDGET_WAIT_MS,
      },
    });
  }

  /** Records an evaluation that keeps the plan, and why a due rebalance is held. */
  #keep(
    decision: Evaluation["decision"],
    context: { kept: KeptRecord; due: { worst: number } | null; placement?: PlacementBrief },
  ): DecisionRecord {
    const { settings, clock } = this.#options;
    const { kept, due, placement } = context;
    this.#health.evaluated(
      clock.now(),
      due === null ? { due: false } : {
        due: true,
        reason: decision.held ?? (decision.failed ? "planning_failed" : "no_better_plan"),
        detail: decision.reason,
        worst: due.worst,
        threshold: settings.threshold,
      },
    );
    return this.#record({
      ...kept,
      at: clock.now(),
      reason: decision.reason,
      ...(decision.failed ? { outcome: "error" as const, error: decision.failed } : {}),
      before: decision.predicted.before,
      after: decision.predicted.after,
      ...(placement ? { placement } : {}),
    });
  }

  /** A failed tick: the held rebalance's reason when one was due, and the failure's record. */
  #tickFailed(
    error: unknown,
    context: { kept: KeptRecord; due: { worst: number } | null },
  ): DecisionRecord {
    const { settings, clock } = this.#options;
    const { kept, due } = context;
    if (due !== null) {
      const outcome = error instanceof SwitchFailed ? error.record.outcome : "error";
      this.#health.evaluated(clock.now(), {
        due: true,
        reason: FAILED_REASON[outcome] ?? "error",
        detail: error instanceof Error ? error.message : String(error),
        worst: due.worst,
        threshold: settings.threshold,
      });
    }
    if (error instanceof SwitchFailed) return error.record;
    return this.#record({
      ...kept,
      at: clock.now(),
      reason: "balancer tick failed",
      outcome: "error",
      error: error instanceof Error ? error.message : String(error),
    });
  }

  /** Runs a switch and records it; throws {@linkcode SwitchFailed} when nothing changed. */
  async #switch(
    placement: UnversionedPlan,
    state: State,
    context: {
      action: DecisionRecord["action"];
      trigger: DecisionRecord["trigger"];
      predicted?: { before: number | null; after: number | null };
      placement?: PlacementBrief;
    },
    run: () => Promise<SwitchOutcome> = () => switchPlan(placement, state, this.#deps),
  ): Promise<SwitchResult> {
    const { current } = state;
    const decidedAt = this.#options.clock.now();
    const outcome = await run();
    const { plan } = outcome;
    const loads = this.observedLoads();
    const predicted = context.predicted ?? {
      before: current === null || loads === null ? null : poolBalanceOrNull(current, loads),
      after: loads === null ? null : poolBalanceOrNull(plan, loads),
    };
    const moved = replicasMoved(current, plan);
    const weights = weightsMoved(current, plan, this.#budgets());
    const base = {
      at: this.#options.clock.now(),
      trigger: context.trigger,
      model: plan.model,
      action: context.action,
      reason: plan.reason,
      version: plan.version,
      before: predicted.before,
      after: predicted.after,
      moved,
      ...(context.placement ? { placement: context.placement } : {}),
    };
    if (outcome.kind !== "switched") {
      const record = this.#record({ ...base, outcome: outcome.kind, error: outcome.error.message });
      const cause = outcome.kind === "conflict"
        ? new BalancerError("conflict", outcome.error.message)
        : outcome.error;
      throw new SwitchFailed(record, cause);
    }
    const now = this.#options.clock.now();
    this.#health.switched(now, weights);
    this.#pending = undefined;
    this.#pendingSince = undefined;
    if (outcome.pending.length > 0) {
      this.#pending = { model: plan.model, version: plan.version, backends: outcome.pending };
      this.#pendingSince = decidedAt;
    } else {
      this.#health.activated(now - decidedAt);
    }
    // The initial (static) placement does not count against adjust_interval.
    if (context.action !== "initial") this.#lastSwitchAt = this.#options.clock.now();
    this.#options.logger.info("plan switched", {
      event: "plan_switch",
      model: plan.model,
      version: plan.version,
      previous: current?.version ?? null,
      reason: plan.reason,
      trigger: context.trigger,
      moved,
      bytes: weights.bytes,
      ...(context.placement ? { placement: context.placement } : {}),
      pending_activation: outcome.pending,
    });
    this.#record(
      outcome.error === undefined
        ? { ...base, bytes: weights.bytes, outcome: "switched" }
        : { ...base, bytes: weights.bytes, outcome: "activate_partial", error: outcome.error },
    );
    return {
      version: plan.version,
      previous: current?.version ?? null,
      reason: plan.reason,
      moved,
      predicted,
      pendingActivation: outcome.pending,
    };
  }

  async #state(action: string, options: { needBackends?: boolean } = {}): Promise<State> {
    const model = this.#model(action);
    const backends = options.needBackends ? this.#backends(action) : this.#options.backends();
    const [current, pinned] = await Promise.all([
      this.#options.store.current(model.name),
      this.#options.store.pinned(model.name),
    ]);
    return { model, backends, current, pinned };
  }

  /** Budgets by backend id; without a source every backend is unlimited. */
  #budgets(): ReadonlyMap<string, BackendBudget> {
    const source = this.#options.budgets;
    if (source !== undefined) return source();
    return new Map(
      this.#options.backends().map((b) => [b.id, { budgetBytes: null, expertBytes: 0 }]),
    );
  }

  /** The worst layer when a rebalance is due now (strategy dynamic, below threshold). */
  #dueOf(evaluation: Evaluation): { worst: number } | null {
    const { settings } = this.#options;
    const worst = evaluation.worst;
    if (!settings.enabled || settings.strategy !== "dynamic" || worst === null) return null;
    return worst < settings.threshold ? { worst } : null;
  }

  /**
   * Slots per backend within the memory budgets (`wanted`, default the planner's sizing);
   * throws when not even one replica fits.
   */
  #slotLimit(
    model: ModelShape,
    backends: readonly PlanBackend[],
    action: string,
    wanted?: number,
  ): number {
    const limit = limitSlots(
      wanted ?? slotsPerBackend(model.experts, backends.length, this.settings.redundancy),
      {
        experts: model.experts,
        layers: model.layers,
        backends: backends.map((b) => b.id),
        budgets: this.#budgets(),
      },
    );
    if (!limit.ok) throw new BalancerError("conflict", `Cannot ${action}: ${limit.reason}`);
    return limit.slots;
  }

  #model(action: string): ModelShape {
    const model = this.#options.modelShape();
    if (model !== null) return model;
    throw new BalancerError(
      "unavailable",
      `Cannot ${action}: no backend has described the model yet`,
    );
  }

  #backends(action: string): PlanBackend[] {
    const backends = this.#options.backends();
    if (backends.length > 0) return backends;
    throw new BalancerError("unavailable", `Cannot ${action}: the pool has no backends`);
  }

  /** Keeps `record` for the API and logs it: "kept" at debug, failures at warn or error. */
  #record(record: DecisionRecord): DecisionRecord {
    this.#health.decided(record.outcome, record.trigger);
    this.#decisions.push(record);
    const kept = this.#options.decisionsKept ?? 20;
    while (this.#decisions.length > kept) this.#decisions.shift();
    this.#options.logger[OUTCOME_LEVEL[record.outcome]]("balancer decision", { ...record });
    return record;
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.then(() => undefined, () => undefined);
    return run;
  }

  async #scheduledTick(generation: number): Promise<void> {
    await this.tick();
    if (!this.#running || generation !== this.#generation) return;
    this.#timer = this.#options.clock.setTimeout(() => {
      this.#timer = undefined;
      void this.#scheduledTick(generation);
    }, this.#options.settings.evaluate_interval ?? this.#options.settings.adjust_interval);
  }
}

/** A switch that changed nothing; carries its decision record and the cause. */
class SwitchFailed extends Error {
  readonly record: DecisionRecord;
  override readonly cause: Error;

  constructor(record: DecisionRecord, cause: Error) {
    super(cause.message);
    this.name = "SwitchFailed";
    this.record = record;
    this.cause = cause;
  }
}

/** For admin actions: the switch's own error (`PlanStageError`, `BalancerError`), not the wrapper. */
function rethrowCause(error: unknown): never {
  throw error instanceof SwitchFailed ? error.cause : error;
}

/** The record of a balancer evaluation that keeps the plan, before its time and reason. */
function keptRecord(model: string | null) {
  return {
    trigger: "balancer" as const,
    model,
    action: "none" as const,
    outcome: "kept" as const,
    version: null,
    before: null,
    after: null,
    moved: null,
  };
}

/** {@linkcode keptRecord}'s shape. */
type KeptRecord = ReturnType<typeof keptRecord>;

/** The brief of a placement analysis, for records and log lines. */
function brief(analysis: PlacementAnalysis | undefined): PlacementBrief | undefined {
  if (analysis === undefined) return undefined;
  return {
    choice: analysis.choice,
    remoteRowMs: analysis.inputs.remoteRow.ms,
    remoteRowSource: analysis.inputs.remoteRow.source,
    gain: analysis.gain,
  };
}

/** A due rebalance's hold when the switch failed. */
const FAILED_REASON: Partial<Record<DecisionOutcome, DueReason>> = {
  stage_failed: "staging_failed",
  conflict: "conflict",
  error: "error",
};

const OUTCOME_LEVEL = {
  kept: "debug",
  switched: "info",
  stage_failed: "warn",
  conflict: "warn",
  activate_partial: "error",
  adopted: "info",
  error: "error",
} as const satisfies Record<DecisionOutcome, "debug" | "info" | "warn" | "error">;
