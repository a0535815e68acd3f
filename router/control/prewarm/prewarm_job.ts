/**
 * @module The pre-warm job adapter: runs {@linkcode runPrewarm} (one run at a time),
 * keeps the last decisions for `GET /api/prewarm`, remembers the capacity estimate, owns
 * the capacity controller that carries out its contracts (tracked every
 * `prewarm.track_interval` between runs), and — once a contract's placement is active —
 * lends its predicted load to the balancer's own ticks for a grace period (otherwise the
 * next tick would re-place for the load observed *before* the spike).
 * Before activation nothing is lent: traffic before the event is balanced as it is.
 * `registerPrewarmCron` schedules it every minute.
 *
 * Prediction check: each decision carries the forecast for the bucket it ran in; once
 * that bucket closed and settled (`settleMs`), the job fills in what it held, so the
 * forecast error is visible per decision and as MAPE ({@linkcode PrewarmJob.accuracy}).
 *
 * Lead windows: after every run the job looks at the events ahead; when an event's lead
 * window begins before the next minute's run, a one-shot timer runs the job exactly at
 * its start, so the plan is staged when the lead window opens, not up to a minute later.
 *
 * History (`history`, `prewarm_history.ts`): every decision is also kept in shared state
 * (again when its check is filled in); a new leader calls {@linkcode PrewarmJob.resume}
 * and shows the same history, and `lastRunAt()` tells it whether a run was missed.
 */
import type { Clock, TimerHandle } from "../../runtime/clock.ts";
import type { Logger } from "../../../shared/logger.ts";
import { observedTokensPerS } from "./capacity.ts";
import { backendsFor } from "./capacity_plan.ts";
import { CapacityController } from "./capacity_controller.ts";
import type { CapacityCondition, ContractSummary, MemberCounts } from "./capacity_contract.ts";
import type { ColdStartSample, LeadTime } from "./lead_time.ts";
import { type PrewarmMemory, runPrewarm } from "./run_prewarm.ts";
import type { PredictionCheck, PrewarmDecision, PrewarmDeps } from "./prewarm_types.ts";
import type { PrewarmHistory } from "./prewarm_history.ts";

/** Options of {@linkcode PrewarmJob}. */
export interface PrewarmJobOptions {
  /** Decisions kept for the API; default 50. */
  decisionsKept?: number;
  /** A bucket is compared with its prediction this long (ms) after it closed; default 5000. */
  settleMs?: number;
  /** Timers for lead-window starts; none: only the cron runs the job. */
  clock?: Clock;
  /** Lead-window runs are scheduled this far ahead at most (ms); default 60 000 (the cron). */
  leadLookaheadMs?: number;
  /** Shared decisions (every router, every leader); none: this job's memory only. */
  history?: PrewarmHistory;
}

/** Forecast accuracy over the decisions kept. */
export interface PrewarmAccuracy {
  /** Decisions whose bucket was observed with traffic (observed > 0). */
  checked: number;
  /** Mean absolute percentage error over those; null when none. */
  mape: number | null;
  /** The newest checked decision's bucket: predicted and observed tokens/s. */
  last: PredictionCheck | null;
}

/** The pre-warm job; see the module doc. */
export class PrewarmJob {
  readonly #deps: PrewarmDeps;
  readonly #kept: number;
  readonly #decisions: PrewarmDecision[] = [];
  readonly #memory: PrewarmMemory = { capacity: null };
  #queue: Promise<unknown> = Promise.resolve();
  readonly #controller: CapacityController;
  readonly #options: PrewarmJobOptions;
  #leadTimer: { at: number; handle: TimerHandle } | undefined;
  #stopped = false;

  constructor(deps: PrewarmDeps, options: PrewarmJobOptions = {}) {
    this.#deps = deps;
    this.#kept = options.decisionsKept ?? 50;
    this.#options = options;
    this.#controller = new CapacityController(deps);
  }

  /** Tracks contracts and lets runs schedule lead-window runs (again, after `stop()`). */
  start(): void {
    this.#stopped = false;
    this.#controller.start();
  }

  /** Stops tracking and cancels a scheduled lead-window run until `start()`. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#leadTimer) this.#options.clock?.clearTimeout(this.#leadTimer.handle);
    this.#leadTimer = undefined;
    await this.#controller.stop();
  }

  /** The capacity controller (contracts, members, cold starts). */
  get capacity(): CapacityController {
    return this.#controller;
  }

  /** The lead time planned with. */
  lead(): LeadTime {
    return this.#controller.lead();
  }

  /** Cold starts measured so far. */
  coldStarts(): readonly ColdStartSample[] {
    return this.#controller.coldStarts();
  }

  /** The open (or last) contract. */
  contract(): ContractSummary | null {
    return this.#controller.contract();
  }

  /** Members by role, pending requests, desired count. */
  members(): MemberCounts {
    return this.#controller.counts();
  }

  /** The desired backend count (what the scaler was last asked for). */
  desired(): number {
    return this.#controller.desired();
  }

  /** Alert conditions of the capacity contracts. */
  conditions(): CapacityCondition[] {
    return this.#controller.conditions();
  }

  /** Deadlines missed since start. */
  get missed(): number {
    return this.#controller.missed;
  }

  /**
   * Why the pool cannot serve an event of `multiplier` within `prewarm.max_backends`: the
   * traffic now × multiplier at the last capacity estimate needs more backends; null when
   * it fits, or when there is no maximum, estimate or traffic to judge by.
   */
  eventProblem(event: { multiplier: number }): string | null {
    const max = this.#deps.settings.max_backends;
    const perBackend = this.#memory.capacity ?? this.#deps.capacityFallback ?? null;
    const today = observedTokensPerS(this.#deps.poolLoad());
    if (max === undefined || perBackend === null || today === null || !(today > 0)) return null;
    const threshold = this.#deps.settings.threshold;
    const needed = backendsFor(today * event.multiplier, perBackend, threshold);
    if (needed <= max) return null;
    return `multiplier ${event.multiplier} on today's ${today.toFixed(1)} tokens/s needs ` +
      `${needed} backends at ${perBackend.toFixed(1)} tokens/s each (threshold ${threshold}), ` +
      `beyond prewarm.max_backends ${max}`;
  }

  /** Replaces the decisions kept with the shared history's newest (a new leader's view). */
  async resume(): Promise<void> {
    const history = this.#options.history;
    if (history === undefined) return;
    const shared = await history.list(this.#kept);
    this.#decisions.splice(0, this.#decisions.length, ...shared);
  }

  /** When the job last ran, as far as the decisions kept say; null if never. */
  lastRunAt(): number | null {
    return this.#decisions.at(-1)?.at ?? null;
  }

  /** MAPE of the checked predictions kept; see {@linkcode PrewarmAccuracy}. */
  accuracy(): PrewarmAccuracy {
    const checked = this.#decisions.flatMap((d) =>
      d.check?.error !== null && d.check?.error !== undefined ? [d.check] : []
    );
    return {
      checked: checked.length,
      mape: checked.length === 0
        ? null
        : checked.reduce((sum, c) => sum + Math.abs(c.error!), 0) / checked.length,
      last: checked.at(-1) ?? null,
    };
  }

  /** The settings in force. */
  get settings(): PrewarmDeps["settings"] {
    return this.#deps.settings;
  }

  /** The scaler's name. */
  get scaler(): string {
    return this.#deps.scaler.name;
  }

  /** Runs once at `now` (after any run in progress); never throws. */
  run(now: number): Promise<PrewarmDecision> {
    const work = async () => {
      const decision = await runPrewarm(this.#deps, this.#controller, now, this.#memory);
      const checked = await this.#observe(now);
      this.#decisions.push(decision);
      while (this.#decisions.length > this.#kept) this.#decisions.shift();
      await this.#share([...checked, decision]);
      await this.#scheduleLead(now);
      return decision;
    };
    const run = this.#queue.then(work, work);
    this.#queue = run.then(() => undefined, () => undefined);
    return run;
  }

  /** Saves decisions to the shared history; a failure is logged, never thrown. */
  async #share(decisions: readonly PrewarmDecision[]): Promise<void> {
    const history = this.#options.history;
    if (history === undefined) return;
    try {
      for (const decision of decisions) await history.save(decision);
    } catch (error) {
      this.#deps.logger.warn("prewarm decision not shared", { error: (error as Error).message });
    }
  }

  /** Fills in what the buckets of earlier decisions held, once they settled; returns those. */
  async #observe(now: number): Promise<PrewarmDecision[]> {
    const filled: PrewarmDecision[] = [];
    const source = this.#deps.traffic;
    if (source.observedTokensPerS === undefined) return filled;
    const settle = this.#options.settleMs ?? 5_000;
    for (const decision of this.#decisions) {
      const check = decision.check;
      if (!check || check.observedTokensPerS !== null || decision.model === null) continue;
      if (check.to + settle > now) continue;
      try {
        const observed = await source.observedTokensPerS(decision.model, check.from, check.to);
        if (observed === null) continue;
        check.observedTokensPerS = observed;
        check.error = observed > 0 ? (check.predictedTokensPerS - observed) / observed : null;
        filled.push(decision);
      } catch (error) {
        this.#deps.logger.warn("prewarm prediction check failed", {
          error: (error as Error).message,
        });
        return filled;
      }
    }
    return filled;
  }

  /** Schedules one run at the start of the next lead window, when before the next cron run. */
  async #scheduleLead(now: number): Promise<void> {
    const clock = this.#options.clock;
    if (clock === undefined || this.#stopped) return;
    const lookahead = this.#options.leadLookaheadMs ?? 60_000;
    let events;
    try {
      events = await this.#deps.events.upcoming(now);
    } catch {
      return;
    }
    const lead = this.#controller.lead().leadMs;
    const starts = events
      .map((e) => e.start - Math.max(lead, e.leadTimeMs ?? 0))
      .filter((at) => at > now && at <= now + lookahead);
    if (starts.length === 0) return;
    const at = Math.min(...starts);
    if (this.#leadTimer?.at === at) return;
    if (this.#leadTimer) clock.clearTimeout(this.#leadTimer.handle);
    const handle = clock.setTimeout(() => {
      this.#leadTimer = undefined;
      if (!this.#stopped) void this.run(at);
    }, at - clock.now());
    this.#leadTimer = { at, handle };
  }

  /** The last decisions, newest first. */
  decisions(): PrewarmDecision[] {
    return [...this.#decisions].reverse();
  }

  /**
   * The load the balancer plans on: for a grace period after a contract's activation the
   * load its placement was planned for (what it observes then still holds the traffic
   * before the event: a max of the two — the blend this once was — judged the event's
   * placement at 0.64 and replaced it with one for both mixes, 0.73 over the simulated event
   * hour), `observed` otherwise.
   */
  blendLoad(model: string, observed: number[][] | null, now: number): number[][] | null {
    const planned = this.#controller.plannedLoad(now);
    if (planned === null || this.#deps.balancer.modelShape()?.name !== model) return observed;
    return planned.map((row) => [...row]);
  }
}

/** The subset of `Deno.cron` the registration uses (injectable for tests). */
export type CronLike = (
  name: string,
  schedule: string,
  options: { signal: AbortSignal },
  handler: () => Promise<void>,
) => Promise<void>;

let cronNames = 0;

/**
 * Registers `job` with `Deno.cron` every minute (never awaited: the promise settles only
 * when the signal aborts); errors of registration and of runs are logged. Returns a
 * function that unregisters it.
 */
export function registerPrewarmCron(
  job: { run(now: number): Promise<unknown> },
  options: { now: () => number; logger: Logger; cron?: CronLike },
): () => void {
  const controller = new AbortController();
  const cron = options.cron ?? (Deno.cron as unknown as CronLike);
  // Cron names are unique per process; a second router in one process gets its own.
  const name = cronNames++ === 0 ? "prewarm" : `prewarm-${cronNames}`;
  try {
    cron(name, "* * * * *", { signal: controller.signal }, async () => {
      try {
        await job.run(options.now());
      } catch (error) {
        options.logger.error("prewarm cron run failed", { error: (error as Error).message });
      }
    }).catch((error) => {
      if (!controller.signal.aborted) {
        options.logger.error("prewarm cron stopped", { error: (error as Error).message });
      }
    });
  } catch (error) {
    options.logger.error("prewarm cron not registered", { error: (error as Error).message });
  }
  return () => controller.abort();
}
