/**
 * @module The pool-wide expert-load series, recorded by the leader from the backends' own
 * counters (`expert_cursor.ts`), so it has no hole when the leader changes.
 *
 * Design: after every load round the leader adds, per backend, what its routed-expert
 * counters grew since its cursor, spread over the buckets of that time, and keeps the
 * adds pending in memory. Every `flushEveryMs` (and on close) one atomic commit per model
 * adds them to the buckets, writes the cursors they reach (`["series", "cursor",
 * backend]`) and checks the leader lease (`fence`): a router that lost the lease writes
 * nothing, and the next leader, which read the cursors at takeover ({@linkcode resume}),
 * adds everything counted since — the leaderless gap included — at its first round.
 * Exact up to what the backends counted; a backend that joined while nobody led has no
 * cursor and is counted from the first report the new leader sees.
 */
import type { LoadReport } from "../../../shared/load_report.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { Clock, TimerHandle } from "../../runtime/clock.ts";
import { withKvRetry } from "../state/kv_retry.ts";
import { type ExpertCursor, spreadOverBuckets, tokensSince } from "./expert_cursor.ts";
import { OPEN_BUCKET_FLUSH_MS } from "./traffic_recorder.ts";
import type { TrafficStore } from "./traffic_store.ts";

/** Where the cursors live: `[...CURSOR_PREFIX, backend]` → {@linkcode ExpertCursor}. */
export const CURSOR_PREFIX: Deno.KvKey = ["series", "cursor"];

/** Options of {@linkcode ExpertLoadRecorder}. */
export interface ExpertLoadRecorderOptions {
  kv: Deno.Kv;
  store: Pick<TrafficStore, "addExpertTokens" | "bucketMs">;
  clock: Clock;
  logger: Logger;
  /**
   * The leader lease's check for a write, null when this router may not write; absent:
   * this router always leads (no check).
   */
  fence?: () => Promise<Deno.AtomicCheck | null>;
  /** Time between commits (ms); default {@linkcode OPEN_BUCKET_FLUSH_MS}. */
  flushEveryMs?: number;
}

interface Pending {
  adds: { start: number; layer: number; tokens: number[] }[];
  cursors: Map<string, ExpertCursor>;
}

/** Records expert load from backend counters; see the module doc. */
export class ExpertLoadRecorder {
  readonly #options: ExpertLoadRecorderOptions;
  /** backend → the cursor the series reaches once pending adds are committed. */
  #cursors = new Map<string, ExpertCursor>();
  /** model → adds and cursors not committed yet. */
  #pending = new Map<string, Pending>();
  #active = false;
  #timer: TimerHandle | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(options: ExpertLoadRecorderOptions) {
    this.#options = options;
  }

  /** Whether rounds are recorded (between {@linkcode resume} and {@linkcode pause}). */
  get active(): boolean {
    return this.#active;
  }

  /** Takes over from the cursors in KV (call on becoming leader); then records rounds. */
  async resume(): Promise<void> {
    await this.#flushing;
    const cursors = new Map<string, ExpertCursor>();
    await withKvRetry(async () => {
      cursors.clear();
      for await (const entry of this.#options.kv.list<ExpertCursor>({ prefix: CURSOR_PREFIX })) {
        cursors.set(entry.value.backend, entry.value);
      }
    });
    this.#cursors = cursors;
    this.#pending.clear();
    this.#active = true;
    this.#schedule();
  }

  /** Stops recording and forgets what is not committed (the next leader adds it). */
  pause(): void {
    this.#active = false;
    this.#pending.clear();
    this.#cursors.clear();
    if (this.#timer !== undefined) this.#options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Adds what `reports` counted since their cursors (no-op unless active). */
  record(reports: readonly LoadReport[]): void {
    if (!this.#active) return;
    for (const report of reports) {
      const { adds, next } = tokensSince(this.#cursors.get(report.backend), report);
      this.#cursors.set(report.backend, next);
      let pending = this.#pending.get(report.model);
      if (pending === undefined) {
        this.#pending.set(report.model, pending = { adds: [], cursors: new Map() });
      }
      pending.cursors.set(report.backend, next);
      for (const add of adds) {
        pending.adds.push(...spreadOverBuckets(add, this.#options.store.bucketMs));
      }
    }
  }

  /** Commits what is pending (joins a commit in progress first). */
  flush(): Promise<void> {
    const batch = [...this.#pending];
    this.#pending.clear();
    this.#flushing = this.#flushing.then(async () => {
      for (const [model, pending] of batch) await this.#commit(model, pending);
    });
    return this.#flushing;
  }

  /** Commits what is pending and stops (a graceful stop). */
  async close(): Promise<void> {
    if (this.#active) await this.flush();
    this.pause();
  }

  async #commit(model: string, pending: Pending): Promise<void> {
    const { store, fence, logger } = this.#options;
    const sets: [Deno.KvKey, unknown][] = [...pending.cursors.values()].map((cursor) => [
      [...CURSOR_PREFIX, cursor.backend],
      cursor,
    ]);
    try {
      const outcome = await store.addExpertTokens(model, pending.adds, async () => {
        if (fence === undefined) return { checks: [], sets };
        const check = await fence();
        return check === null ? null : { checks: [check], sets };
      });
      if (outcome === "fenced") {
        logger.info("expert load left to the next leader", { event: "leader", model });
        this.pause();
      }
    } catch (error) {
      // Not committed: put it back in front of what came since (cursors stay ahead).
      logger.warn("expert load not written yet", { model, error: (error as Error).message });
      const now = this.#pending.get(model);
      this.#pending.set(model, {
        adds: [...pending.adds, ...(now?.adds ?? [])],
        cursors: new Map([...pending.cursors, ...(now?.cursors ?? [])]),
      });
    }
  }

  #schedule(): void {
    if (!this.#active || this.#timer !== undefined) return;
    this.#timer = this.#options.clock.setTimeout(() => {
      this.#timer = undefined;
      void this.flush().finally(() => this.#schedule());
    }, this.#options.flushEveryMs ?? OPEN_BUCKET_FLUSH_MS);
  }
}
