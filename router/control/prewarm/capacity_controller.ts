/**
 * @module Carries out capacity contracts: "N backends ready, with this placement staged, by
 * T" (`capacity_contract.ts`), through a scaler, in both directions.
 *
 * Design.
 * - {@linkcode CapacityController.plan} (every job run) turns the job's capacity plan into
 *   a contract and scaler requests: more backends when the plan needs more than the pool
 *   has or was promised; after the need stayed below the pool for `scale_down_hold`,
 *   members it added are drained (newest first, never below the floor).
 * - {@linkcode CapacityController.track} (every `track_interval` and after each run):
 *   1. backends the scaler reports ready join the pool (`standby` while a contract
 *      prepares, else `active`); a new member is matched to the oldest request and its
 *      cold start (request → ready) recorded;
 *   2. the contract is assessed; at risk, missed or stuck is logged once per contract and
 *      shown as an alert condition and in metrics;
 *   3. once every backend it needs is ready (or none more can arrive in time), the
 *      contract's placement — planned for the *target* pool on the predicted load — is
 *      staged on all of them (`stagePlan()`), loading into spare memory while the old
 *      plan serves; each new backend's stage time is its expert load time;
 *   4. at `readyBy`, or earlier when the contract's traffic arrives (observed tokens/s at
 *      the ramp level), the staged version is activated (`Balancer.activateStaged()`), the
 *      standby members joining the pool in the same turn;
 *   5. draining members leave once the current plan no longer places experts on them and
 *      their requests in flight have finished: removed from the pool, then stopped
 *      through the scaler. Nothing in flight is ever cut.
 * - Lead time = the measured cold start percentile (`lead_time.ts`). Steps 3 and 4 are
 *   `contract_steps.ts`.
 */
import type { TimerHandle } from "../../runtime/clock.ts";
import type { BackendRole } from "../../serve/pool/backend_view.ts";
import {
  assessContract,
  type CapacityCondition,
  type ContractInput,
  type ContractState,
  type ContractSummary,
  type MemberCounts,
} from "./capacity_contract.ts";
import { isActive, isDraining, isReady } from "./_members.ts";
import { activateContract, stageContract } from "./contract_steps.ts";
import type { CapacityPlan } from "./capacity_plan.ts";
import { ColdStartBook, type ColdStartSample, type LeadTime, leadTime } from "./lead_time.ts";
import type { PrewarmDeps, ScaleRequest, ScalerOutcome } from "./prewarm_types.ts";

/** What the controller needs of the job's deps. */
export type CapacityControllerDeps = Pick<
  PrewarmDeps,
  | "settings"
  | "balancer"
  | "placement"
  | "scaler"
  | "pool"
  | "currentPlan"
  | "poolLoad"
  | "clock"
  | "logger"
  | "floor"
>;

interface Pending {
  at: number;
  /** Known when the scaler started it (`local`). */
  url?: string;
}

/** Options of {@linkcode CapacityController}. */
export interface CapacityControllerOptions {
  /** Share of the way from the baseline to the contract's traffic that counts as arrived; 0.5. */
  rampShare?: number;
  /** Staging retries wait this long after a failure (ms); default 30 s. */
  stageRetryMs?: number;
  /** How long after activation the balancer plans on the contract's load (ms); default 2 min. */
  activationGraceMs?: number;
}

/** Carries out contracts; see the module doc. */
export class CapacityController {
  readonly #deps: CapacityControllerDeps;
  readonly #options: CapacityControllerOptions;
  readonly #book = new ColdStartBook();
  #contract: ContractState | null = null;
  #closed: ContractState | null = null;
  #pending: Pending[] = [];
  #desired: number;
  /** URLs this controller added to the pool (scale-down candidates), oldest first. */
  #added: string[] = [];
  /** URLs matched or present at start: not new members. */
  readonly #known = new Set<string>();
  /** URLs drained and stopped: a late "ready" report does not bring them back. */
  readonly #gone = new Set<string>();
  readonly #floor: number;
  #belowSince: number | null = null;
  #lastInput: ContractInput | undefined;
  #stageRetryAt = 0;
  #missed = 0;
  #scalerFailure: string | null = null;
  #timer: TimerHandle | undefined;
  #running = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(deps: CapacityControllerDeps, options: CapacityControllerOptions = {}) {
    this.#deps = deps;
    this.#options = options;
    for (const member of deps.pool.views()) this.#known.add(member.url);
    const active = this.#members().filter(isActive).length;
    this.#floor = deps.floor ?? Math.max(1, active);
    this.#desired = Math.max(this.floor(), active);
    deps.pool.admitAs((_url) => this.#roleForNew());
  }

  /** Fewest backends: `min_backends`, else `deps.floor`, else the active members at start. */
  floor(): number {
    return this.#deps.settings.min_backends ?? this.#floor;
  }

  /** The lead time from the cold starts measured so far. */
  lead(): LeadTime {
    const s = this.#deps.settings;
    return leadTime(this.#book.samples(), {
      configuredMs: s.lead_time,
      ...(s.cold_start_percentile === undefined ? {} : { percentile: s.cold_start_percentile }),
      ...(s.lead_margin === undefined ? {} : { margin: s.lead_margin }),
    });
  }

  /** The cold-start samples kept. */
  coldStarts() {
    return this.#book.samples();
  }

  /** Adds a cold start measured elsewhere (a benchmark's warm-up, an earlier leader's). */
  recordColdStart(sample: ColdStartSample): void {
    this.#book.record(sample);
  }

  /** What the scaler was last asked for (the Kubernetes desired-replicas value). */
  desired(): number {
    return this.#desired;
  }

  /** Deadlines missed since start. */
  get missed(): number {
    return this.#missed;
  }

  /** Members by role and requests pending. */
  counts(): MemberCounts {
    const members = this.#members();
    const role = (r: BackendRole) => members.filter((m) => (m.role ?? "active") === r).length;
    return {
      active: role("active"),
      standby: role("standby"),
      draining: role("draining"),
      ready: members.filter((m) => !isDraining(m) && isReady(m)).length,
      pending: this.#pending.length,
      desired: this.#desired,
    };
  }

  /** The open contract (or the last closed one), summarised. */
  contract(): ContractSummary | null {
    const c = this.#contract ?? this.#closed;
    if (c === null) return null;
    const a = c.assessment;
    return {
      id: c.id,
      source: c.source,
      event: c.event,
      target: c.target,
      readyBy: c.readyBy,
      until: c.until,
      status: this.#contract === null
        ? "closed"
        : c.activatedAt !== null
        ? "activated"
        : a?.status ?? "on_track",
      ready: this.counts().ready,
      pending: this.#pending.length,
      stagedVersion: c.staged?.version ?? null,
      stagedBackends: c.staged?.backends ?? [],
      activatedAt: c.activatedAt,
      expectedReadyAt: a?.expectedReadyAt ?? null,
      message: a?.message ?? c.reason,
    };
  }

  /**
   * The contract's planned load for a grace period after its activation (default 2 min: two
   * windows of the balancer's 60 s load EWMA), while what the balancer observes still lags
   * behind the traffic that just arrived; null otherwise.
   */
  plannedLoad(now: number): number[][] | null {
    const c = this.#contract;
    const grace = this.#options.activationGraceMs ?? 120_000;
    return c !== null && c.activatedAt !== null && now < Math.min(c.until, c.activatedAt + grace)
      ? c.load
      : null;
  }

  /** Alert conditions: a contract at risk or missed, a plan capped by the maximum, a scaler failing. */
  conditions(): CapacityCondition[] {
    const out: CapacityCondition[] = [];
    const c = this.#contract;
    const status = c?.assessment?.status;
    if (c && c.activatedAt === null && (status === "at_risk" || status === "missed")) {
      out.push({
        id: `capacity:deadline:${c.id}`,
        kind: "capacity",
        subject: c.event ?? "forecast",
        value: this.counts().ready,
        threshold: c.target,
        message: c.assessment!.message,
      });
    }
    const plan = this.#lastInput?.plan;
    if (plan?.capped) {
      out.push({
        id: "capacity:capped",
        kind: "capacity",
        subject: plan.event ?? "forecast",
        value: plan.target,
        threshold: plan.needed,
        message: `${plan.reason}: prewarm.max_backends caps the pool below what is needed`,
      });
    }
    if (this.#scalerFailure !== null) {
      out.push({
        id: "capacity:scaler",
        kind: "capacity",
        subject: this.#deps.scaler.name,
        value: 0,
        threshold: 1,
        message: this.#scalerFailure,
      });
    }
    return out;
  }

  /** Runs `track` every `track_interval` until {@linkcode CapacityController.stop}. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#schedule();
  }

  /** Stops tracking and waits for a step in progress. */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer !== undefined) this.#deps.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#queue;
  }

  /**
   * Acts on the job's capacity plan: opens or updates the contract and asks the scaler for
   * what is missing, or gives capacity back after the hold. Returns the scaler's outcome
   * (null when it was not called).
   */
  plan(now: number, input: ContractInput): Promise<ScalerOutcome | null> {
    return this.#exclusive(async () => {
      this.#lastInput = input;
      const { plan } = input;
      if (plan.readyBy !== null) {
        this.#belowSince = null;
        this.#open(now, input);
        return await this.#scaleUp(now);
      }
      if (this.#contract !== null && now >= this.#contract.until) this.#close(now);
      return await this.#maybeScaleDown(now, plan);
    });
  }

  /** One tracking step; see the module doc. Never throws. */
  track(now: number): Promise<void> {
    return this.#exclusive(async () => {
      try {
        await this.#joinReady(now);
        this.#assess(now);
        await this.#stage(now);
        await this.#activate(now);
        await this.#leaveDrained();
      } catch (error) {
        this.#deps.logger.error("capacity tracking failed", {
          event: "prewarm",
          error: error instanceof Error ? error.message : String(error),
        });
      }
    });
  }

  #open(now: number, input: ContractInput): void {
    const { plan } = input;
    const c = this.#contract;
    const same = c !== null && c.source === plan.source && c.event === plan.event;
    if (same) {
      Object.assign(c, {
        // A contract's target only grows: what was asked for stays asked for (a smaller
        // need is given back after the contract, with the hold), and staging does not churn.
        target: Math.max(plan.target, c.target),
        readyBy: c.activatedAt !== null ? c.readyBy : plan.readyBy!,
        until: Math.max(c.until, input.until),
        load: input.load ?? c.load,
        rampTokensPerS: input.rampTokensPerS,
        reason: plan.reason,
      });
      return;
    }
    if (c !== null && c.activatedAt !== null && now < c.until) {
      // A running contract stays in force; a bigger need raises its target.
      c.target = Math.max(c.target, plan.target);
      return;
    }
    const id = `c${(Number((c ?? this.#closed)?.id.slice(1) ?? 0)) + 1}`;
    this.#contract = {
      id,
      openedAt: now,
      target: plan.target,
      readyBy: plan.readyBy!,
      source: plan.source === "event" ? "event" : "forecast",
      event: plan.event,
      until: input.until,
      load: input.load,
      rampTokensPerS: input.rampTokensPerS,
      reason: plan.reason,
      assessment: null,
      staged: null,
      activatedAt: null,
      escalated: [],
    };
    this.#deps.logger.info("capacity contract opened", {
      event: "prewarm",
      contract: id,
      target: plan.target,
      ready_by: new Date(plan.readyBy!).toISOString(),
      lead_ms: this.lead().leadMs,
      reason: plan.reason,
    });
  }

  #close(now: number): void {
    const c = this.#contract!;
    this.#deps.logger.info("capacity contract closed", {
      event: "prewarm",
      contract: c.id,
      activated: c.activatedAt !== null,
      at: new Date(now).toISOString(),
    });
    this.#closed = c;
    this.#contract = null;
  }

  async #scaleUp(now: number): Promise<ScalerOutcome | null> {
    const c = this.#contract!;
    // Members draining are taken back first: they are warm.
    let have = this.#promised();
    for (const member of this.#members().filter(isDraining)) {
      if (have >= c.target) break;
      this.#deps.pool.setRole(member.url, c.activatedAt === null ? "standby" : "active");
      have++;
    }
    if (have >= c.target && this.#desired >= c.target) return null;
    const outcome = await this.#request({
      ...this.#context(),
      target: c.target,
      current: have,
      readyBy: c.readyBy,
      remove: [],
      contract: c.id,
    });
    if (outcome.status !== "failed" && this.#deps.scaler.acts) {
      const started = outcome.started ?? [];
      for (const url of started) this.#gone.delete(url);
      const missing = Math.max(0, c.target - have);
      for (let i = 0; i < missing; i++) {
        this.#pending.push(started[i] === undefined ? { at: now } : { at: now, url: started[i]! });
      }
    }
    return outcome;
  }

  async #maybeScaleDown(now: number, plan: CapacityPlan): Promise<ScalerOutcome | null> {
    const keep = Math.max(this.floor(), plan.keep);
    const excess = this.#promised() - keep;
    if (excess <= 0 || this.#contract !== null) {
      this.#belowSince = null;
      return null;
    }
    this.#belowSince ??= now;
    if (now - this.#belowSince < (this.#deps.settings.scale_down_hold ?? 600_000)) return null;
    // Requests not ready yet go first, then members this controller added, newest first.
    const cancelled = this.#pending.splice(Math.max(0, this.#pending.length - excess));
    let left = excess - cancelled.length;
    const members = this.#members();
    for (const url of [...this.#added].reverse()) {
      if (left <= 0) break;
      const member = members.find((m) => m.url === url);
      if (member === undefined || isDraining(member)) continue;
      this.#deps.pool.setRole(url, "draining");
      left--;
    }
    this.#belowSince = null;
    const urls = cancelled.flatMap((p) => p.url === undefined ? [] : [p.url]);
    this.#deps.logger.info("capacity scaling down", {
      event: "prewarm",
      keep,
      cancelled: cancelled.length,
      draining: excess - cancelled.length - left,
      reason: plan.reason,
    });
    if (cancelled.length === 0) return null;
    return await this.#request({
      ...this.#context(),
      target: Math.max(keep, this.#desired - cancelled.length),
      current: this.#desired,
      readyBy: null,
      remove: urls,
      contract: null,
      reason: `${cancelled.length} requested backend(s) no longer needed: ${plan.reason}`,
    });
  }

  /** The parts of a scale request that come from the job's last run. */
  #context(): Pick<
    ScaleRequest,
    "model" | "predictedTokensPerS" | "capacityPerBackend" | "threshold" | "reason"
  > {
    const input = this.#lastInput;
    return {
      model: input?.model ?? this.#deps.balancer.modelShape()?.name ?? null,
      predictedTokensPerS: input?.plan.peak?.tokensPerS ?? null,
      capacityPerBackend: input?.capacityPerBackend ?? null,
      threshold: input?.threshold ?? this.#deps.settings.threshold,
      reason: input?.plan.reason ?? "",
    };
  }

  /** Asks the scaler; a failure is logged and shown as an alert condition. */
  async #request(request: ScaleRequest): Promise<ScalerOutcome> {
    const outcome = await this.#deps.scaler.scale(request);
    if (outcome.status === "failed") {
      this.#scalerFailure = `scaler "${outcome.scaler}" failed to scale to ${request.target}: ${
        outcome.detail ?? "no detail"
      }`;
      this.#deps.logger.error("scaler failed", {
        event: "prewarm",
        scaler: outcome.scaler,
        target: request.target,
        contract: request.contract,
        detail: outcome.detail,
      });
    } else {
      this.#scalerFailure = null;
      this.#desired = request.target;
    }
    return outcome;
  }

  /** Step 1: ready backends join; cold starts recorded. */
  async #joinReady(now: number): Promise<void> {
    const scaled = await this.#deps.scaler.ready?.() ?? [];
    for (const backend of scaled) {
      if (this.#known.has(backend.url) || this.#gone.has(backend.url)) continue;
      this.#deps.pool.add(backend.url, { role: this.#roleForNew() });
      this.#matched(backend.url, now, backend.readyAt - backend.requestedAt);
    }
    for (const member of this.#members()) {
      if (this.#known.has(member.url) || !isReady(member)) continue;
      this.#matched(member.url, now, null);
    }
  }

  /**
   * A new member: it answers its request (by URL when the scaler started it, else the
   * oldest). Only members that answer a request (or that the scaler started) are this
   * controller's to give back; their cold start (request → ready) is kept.
   */
  #matched(url: string, now: number, readyMs: number | null): void {
    this.#known.add(url);
    let index = this.#pending.findIndex((p) => p.url === url);
    if (index < 0) index = this.#pending.findIndex((p) => p.url === undefined);
    const request = index < 0 ? undefined : this.#pending.splice(index, 1)[0];
    if (request === undefined && readyMs === null) return; // joined on its own (discovery)
    this.#added.push(url);
    const measured = readyMs ?? now - request!.at;
    this.#book.record({ backend: url, at: now, readyMs: measured, expertLoadMs: null });
    this.#deps.logger.info("backend ready", {
      event: "prewarm",
      url,
      ready_ms: Math.round(measured),
      lead_ms: this.lead().leadMs,
    });
  }

  /** Step 2: the contract's assessment; transitions escalate once. */
  #assess(now: number): void {
    const c = this.#contract;
    if (c === null || c.activatedAt !== null) return;
    const lead = this.lead();
    const assessment = assessContract(c, {
      now,
      ready: this.counts().ready,
      pending: this.#deps.scaler.acts ? this.#pending.map((p) => p.at) : [],
      coldStartMs: lead.coldStartMs ?? lead.leadMs,
      readyTimeoutMs: this.#deps.settings.ready_timeout ?? 15 * 60_000,
    });
    c.assessment = assessment;
    const key = assessment.stuck > 0 && assessment.status !== "missed"
      ? `${assessment.status}+stuck`
      : assessment.status;
    if (assessment.status === "missed" && !c.escalated.includes("missed")) this.#missed++;
    if (
      (assessment.status === "at_risk" || assessment.status === "missed" ||
        assessment.stuck > 0) && !c.escalated.includes(key)
    ) {
      c.escalated.push(key);
      this.#deps.logger[assessment.status === "missed" ? "error" : "warn"](
        `capacity contract ${assessment.status === "missed" ? "missed" : "at risk"}`,
        {
          event: "prewarm",
          contract: c.id,
          status: assessment.status,
          target: c.target,
          ready_by: new Date(c.readyBy).toISOString(),
          stuck: assessment.stuck,
          scaler: this.#deps.scaler.name,
          message: assessment.message,
        },
      );
    }
  }

  /** Step 3: stage the contract's placement on the backends ready for it. */
  async #stage(now: number): Promise<void> {
    const c = this.#contract;
    if (c === null || c.activatedAt !== null || c.load === null || now < this.#stageRetryAt) return;
    const result = await stageContract(c, now, {
      deps: this.#deps,
      members: this.#members(),
      lead: this.lead(),
      added: this.#added,
      expertLoad: (url, ms) => this.#book.expertLoad(url, ms),
    });
    if (result === "failed") this.#stageRetryAt = now + (this.#options.stageRetryMs ?? 30_000);
  }

  /** Step 4: activate at `readyBy` or when the contract's traffic arrives. */
  async #activate(now: number): Promise<void> {
    const c = this.#contract;
    if (c === null || c.activatedAt !== null) return;
    await activateContract(c, now, { deps: this.#deps, members: this.#members() });
  }

  /** Step 5: drained members leave (pool first, then the scaler stops them). */
  async #leaveDrained(): Promise<void> {
    const draining = this.#members().filter(isDraining);
    if (draining.length === 0) return;
    const model = this.#deps.balancer.modelShape()?.name;
    const current = model === undefined ? null : await this.#deps.currentPlan(model);
    const placed = new Set(current?.backends.map((b) => b.id) ?? []);
    for (const member of draining) {
      if (placed.has(member.name) || member.inFlight > 0) continue;
      this.#deps.pool.remove(member.url);
      this.#added = this.#added.filter((url) => url !== member.url);
      this.#known.delete(member.url);
      this.#gone.add(member.url);
      await this.#request({
        ...this.#context(),
        target: Math.max(this.floor(), this.#desired - 1),
        current: this.#desired,
        readyBy: null,
        remove: [member.url],
        contract: null,
        reason: `backend ${member.name} drained after the peak`,
      });
      this.#deps.logger.info("backend drained and removed", {
        event: "prewarm",
        backend: member.name,
        url: member.url,
      });
    }
  }

  /** Backends the pool has (active, standby) or was promised (pending). */
  #promised(): number {
    const members = this.#members().filter((m) => !isDraining(m));
    return members.length + this.#pending.length;
  }

  #roleForNew(): BackendRole {
    const c = this.#contract;
    return c !== null && c.activatedAt === null ? "standby" : "active";
  }

  #members() {
    return this.#deps.pool.views();
  }

  #schedule(): void {
    if (!this.#running) return;
    this.#timer = this.#deps.clock.setTimeout(() => {
      this.#timer = undefined;
      void this.track(this.#deps.clock.now()).finally(() => this.#schedule());
    }, this.#deps.settings.track_interval ?? 5000);
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.then(() => undefined, () => undefined);
    return run;
  }
}
