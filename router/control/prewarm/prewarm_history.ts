/**
 * @module The pre-warm job's decisions in shared state, so `GET /api/prewarm` shows the
 * same history on every router and after the leader changes, and a new leader knows when
 * the job last ran: `["prewarm", "decisions", at, trigger]` → the decision (saved again
 * when its prediction check is filled in), kept for `expireInMs`. And
 * {@linkcode missedCronRun}: whether a scheduled run fell due while nobody ran it.
 */
import { withKvRetry } from "../state/kv_retry.ts";
import type { PrewarmDecision } from "./prewarm_types.ts";

/** Where decisions are kept. */
export const DECISIONS_PREFIX: Deno.KvKey = ["prewarm", "decisions"];

/** Decisions in shared state. */
export interface PrewarmHistory {
  /** Saves (or updates) one decision. */
  save(decision: PrewarmDecision): Promise<void>;
  /** The newest `limit` decisions, oldest first. */
  list(limit: number): Promise<PrewarmDecision[]>;
}

/** {@linkcode PrewarmHistory} in Deno KV. */
export class KvPrewarmHistory implements PrewarmHistory {
  readonly #kv: Deno.Kv;
  readonly #expireInMs: number;

  /** `expireInMs`: how long a decision is kept (default 7 days). */
  constructor(kv: Deno.Kv, expireInMs = 7 * 86_400_000) {
    this.#kv = kv;
    this.#expireInMs = expireInMs;
  }

  async save(decision: PrewarmDecision): Promise<void> {
    const key = [...DECISIONS_PREFIX, decision.at, decision.trigger];
    await withKvRetry(() => this.#kv.set(key, decision, { expireIn: this.#expireInMs }));
  }

  async list(limit: number): Promise<PrewarmDecision[]> {
    const newest: PrewarmDecision[] = [];
    await withKvRetry(async () => {
      newest.length = 0;
      const entries = this.#kv.list<PrewarmDecision>({ prefix: DECISIONS_PREFIX }, {
        reverse: true,
        limit,
      });
      for await (const entry of entries) newest.push(entry.value);
    });
    return newest.reverse();
  }
}

/**
 * Whether a run scheduled on every `periodMs` boundary (the cron: every minute) fell due
 * after `since` (the last run, or when leadership lapsed) and by `now`; false without
 * `since` (nothing says a run was missed).
 */
export function missedCronRun(since: number | null, now: number, periodMs = 60_000): boolean {
  if (since === null) return false;
  return Math.floor(now / periodMs) > Math.floor(since / periodMs);
}
