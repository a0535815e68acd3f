/**
 * @module The pre-warm job adapter: runs {@linkcode runPrewarm} (one run at a time),
 * keeps the last decisions for `GET /api/prewarm`, remembers the capacity estimate, and
 * holds the predicted load a pre-warm planned for, so the balancer's own ticks plan on
 * it too (otherwise the next tick would re-place for the load observed *before* the
 * spike and undo the pre-warm). `registerPrewarmCron` schedules it every minute.
 */
import type { Logger } from "../../shared/logger.ts";
import { type PrewarmMemory, runPrewarm } from "./run_prewarm.ts";
import type { PrewarmDecision, PrewarmDeps } from "./prewarm_types.ts";

/** Options of {@linkcode PrewarmJob}. */
export interface PrewarmJobOptions {
  /** Decisions kept for the API; default 50. */
  decisionsKept?: number;
}

/** The pre-warm job; see the module doc. */
export class PrewarmJob {
  readonly #deps: PrewarmDeps;
  readonly #kept: number;
  readonly #decisions: PrewarmDecision[] = [];
  readonly #memory: PrewarmMemory = { capacity: null };
  #queue: Promise<unknown> = Promise.resolve();
  #planned: { model: string; load: number[][]; until: number } | undefined;

  constructor(deps: PrewarmDeps, options: PrewarmJobOptions = {}) {
    this.#deps = deps;
    this.#kept = options.decisionsKept ?? 50;
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
      const decision = await runPrewarm(this.#deps, now, this.#memory);
      this.#decisions.push(decision);
      while (this.#decisions.length > this.#kept) this.#decisions.shift();
      if (decision.outcome === "prewarmed" && decision.model !== null && decision.predicted) {
        this.#planned = {
          model: decision.model,
          load: decision.predicted.expertLoad,
          until: Math.max(now + this.#deps.settings.horizon, decision.predicted.peakAt),
        };
      }
      return decision;
    };
    const run = this.#queue.then(work, work);
    this.#queue = run.then(() => undefined, () => undefined);
    return run;
  }

  /** The last decisions, newest first. */
  decisions(): PrewarmDecision[] {
    return [...this.#decisions].reverse();
  }

  /**
   * `observed` raised element-wise to the load the last pre-warm planned for, while that
   * pre-warm is in force (until its horizon or peak passes); `observed` otherwise.
   */
  blendLoad(model: string, observed: number[][] | null, now: number): number[][] | null {
    const planned = this.#planned;
    if (planned === undefined || planned.model !== model || now >= planned.until) return observed;
    if (observed === null) return planned.load.map((row) => [...row]);
    if (observed.length !== planned.load.length) return observed;
    return observed.map((row, l) => {
      const other = planned.load[l]!;
      return other.length === row.length ? row.map((v, e) => Math.max(v, other[e]!)) : row;
    });
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
