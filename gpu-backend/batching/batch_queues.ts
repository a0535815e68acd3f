/**
 * @module Micro-batching queues in front of an execution kernel, generic over what a
 * queue holds: per model part (the per-expert path, `micro_batcher.ts`) or per layer
 * executable (`gpu-backend/layer/layer_batcher.ts`).
 *
 * Every queue holds request groups (one request's — or one peer frame's — work for that
 * queue). The batcher owns the kernel's capacity: it keeps at most `kernel.depth`
 * executions outstanding and, whenever a place is free, asks the policy which queue to
 * serve — among those ready, the highest `priority`, then the one whose head has waited
 * longest — and takes up to `policy.maxGroups` groups (and `maxRowsPerBatch` rows) into
 * one execution. While all slots are busy, queues keep growing, so the next batch forms
 * while the current one runs. The kernel splits results back per group.
 *
 * After an execution of several groups, or while other groups wait, the next dispatch
 * waits one event-loop turn (`defer`): the groups just answered go on to their next
 * queue in promise continuations, and a decision taken before those ran would send a
 * fragment of them (or another queue) ahead of the rest. A lone group with nothing else
 * waiting has nobody to wait for: its next work dispatches at once (in Deno a deferred
 * turn can wait for the next I/O event — measured 0.1–1.5 ms at idle).
 */
import { setImmediate } from "node:timers";
import { ArrivalRate, ServiceCurve } from "./estimators.ts";
import type { BatchPolicy, QueueView } from "./policies.ts";

/**
 * Where one group's time went between `submit` and its result: waiting while every
 * execution place was taken (`queueMs`), waiting while a place was free — the policy
 * letting the batch fill (`batchMs`) —, the execution's own time (`execMs`) and its wall
 * time from dispatch to result (`runMs` ≥ `execMs`: hand-off to a Worker and back).
 */
export interface BatchInfo {
  /** Groups the execution coalesced. */
  groups: number;
  queueMs: number;
  batchMs: number;
  execMs: number;
  runMs: number;
}

/** Told, per group, how its execution went. */
export type BatchObserver = (batch: BatchInfo) => void;

/** One execution's device time and, once it finished, the results per group. */
export interface KernelRun<R> {
  /** Milliseconds of the execution itself. */
  ms: number;
  /** Splits the outputs per group, in the order the groups were given (synchronous). */
  split(): R[];
}

/** Executes one queue's groups as one execution. */
export interface BatchKernel<W, R> {
  /** Executions that run at the same time. */
  readonly slots: number;
  /** Executions accepted at once (≥ slots when the kernel pipelines). */
  readonly depth: number;
  /** Whether executions run on the thread that feeds them (main-thread execution). */
  readonly sharedThread: boolean;
  /**
   * Starts one execution of `groups` of queue `key` holding `rows` rows in total. The
   * synchronous part (assembling inputs) counts as host time, so keep it before the
   * first `await`.
   */
  execute(key: string, groups: readonly W[], rows: number): Promise<KernelRun<R>>;
}

/** Options of {@linkcode BatchQueues}. */
export interface BatchQueuesOptions<W, R> {
  kernel: BatchKernel<W, R>;
  policy: BatchPolicy;
  /** Row cap of one execution (a single larger group still runs alone). */
  maxRowsPerBatch?: number;
  /** Service-time prior before measurements exist. */
  priorService?: { fixedMs: number; perRowMs: number };
  /** Priority of a queue among ready ones (higher first; default 0 for all). */
  priority?: (key: string) => number;
  /** Whether new requests enter at queue `key` (the policy may let it fill; default none). */
  entry?: (key: string) => boolean;
  /** Clock in ms; default `performance.now`. */
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => number;
  clearTimer?: (id: number) => void;
  /** Runs `fn` once pending promise continuations ran; default `setImmediate`. */
  defer?: (fn: () => void) => void;
}

/** Batching statistics of one queue. */
export interface QueueBatchStats {
  /** The queue's key (a part key such as `L0/E3`, or a layer queue `L0/layer`). */
  part: string;
  /** `formedBatches[n]` = executions that coalesced n groups. */
  formedBatches: number[];
  executions: number;
  groups: number;
  rows: number;
  queueDelayMsSum: number;
  queueDelayMsMax: number;
  /** Σ of those waits' parts while every execution place was taken (queueing proper). */
  busyWaitMsSum: number;
  executionMsSum: number;
  queuedGroups: number;
  target: number;
  arrivalPerS: number;
  service: { fixedMs: number; perRowMs: number };
}

/** How often the policy re-plans from the traffic (ms). */
const PLAN_EVERY_MS = 5;

interface Group<W, R> {
  work: W;
  rows: number;
  enqueuedAt: number;
  /** The saturation clock when it was queued (see `BatchQueues.#saturation`). */
  saturationAt: number;
  /** Its wait split at dispatch. */
  queueMs: number;
  batchMs: number;
  resolve: (result: R) => void;
  reject: (error: Error) => void;
  onBatch: BatchObserver | undefined;
}

class Queue<W, R> {
  readonly groups: Group<W, R>[] = [];
  readonly arrivals = new ArrivalRate();
  readonly service: ServiceCurve;
  meanRows = 1;
  target = 1;
  /** The policy's window for this queue (ms). */
  window = 0;
  stats: Omit<QueueBatchStats, "queuedGroups" | "target" | "arrivalPerS" | "service">;

  constructor(
    readonly key: string,
    prior: { fixedMs: number; perRowMs: number },
    readonly priority: number,
    readonly entry: boolean,
  ) {
    this.service = new ServiceCurve(prior);
    this.stats = {
      part: key,
      formedBatches: [],
      executions: 0,
      groups: 0,
      rows: 0,
      queueDelayMsSum: 0,
      queueDelayMsMax: 0,
      busyWaitMsSum: 0,
      executionMsSum: 0,
    };
  }
}

/** Coalesces concurrent groups per queue into micro-batches on one kernel. */
export class BatchQueues<W, R> {
  readonly #kernel: BatchKernel<W, R>;
  readonly #policy: BatchPolicy;
  readonly #maxRows: number;
  readonly #prior: { fixedMs: number; perRowMs: number };
  readonly #priority: (key: string) => number;
  readonly #entry: (key: string) => boolean;
  readonly #now: () => number;
  readonly #setTimer: (fn: () => void, ms: number) => number;
  readonly #clearTimer: (id: number) => void;
  readonly #defer: (fn: () => void) => void;
  /** An execution just finished: dispatching waits for its groups' follow-up work. */
  #settling = false;
  readonly #queues = new Map<string, Queue<W, R>>();
  /** Queues holding at least one group. */
  readonly #waiting = new Set<Queue<W, R>>();
  #running = 0;
  /** Σ time every execution place was taken, up to `#saturatedSince` (ms). */
  #saturatedMs = 0;
  /** Since when every place is taken; null while one is free. */
  #saturatedSince: number | null = null;
  /** Σ time at least one execution ran, up to `#busySince` (ms). */
  #busyMs = 0;
  /** Since when an execution runs; null while none does. */
  #busySince: number | null = null;
  #plannedAt = -Infinity;
  /** Host-thread ms per execution: assembling inputs, hand-off, splitting (EWMA). */
  #hostMs = 0;
  #timer: { id: number; at: number } | null = null;

  constructor(options: BatchQueuesOptions<W, R>) {
    this.#kernel = options.kernel;
    this.#policy = options.policy;
    this.#maxRows = options.maxRowsPerBatch ?? 1024;
    this.#prior = options.priorService ?? { fixedMs: 0.1, perRowMs: 0.02 };
    this.#priority = options.priority ?? (() => 0);
    this.#entry = options.entry ?? (() => false);
    this.#now = options.now ?? (() => performance.now());
    this.#setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms) as unknown as number);
    this.#clearTimer = options.clearTimer ?? ((id) => clearTimeout(id));
    this.#defer = options.defer ?? ((fn) => setImmediate(fn));
  }

  /** The policy in use. */
  get policy(): BatchPolicy {
    return this.#policy;
  }

  /** Queues `work` (`rows` rows) on queue `key`; resolves with its share of the results. */
  submit(key: string, work: W, rows: number, onBatch?: BatchObserver): Promise<R> {
    let queue = this.#queues.get(key);
    if (!queue) {
      queue = new Queue<W, R>(key, this.#prior, this.#priority(key), this.#entry(key));
      queue.window = this.#policy.windowMs();
      this.#queues.set(key, queue);
    }
    const now = this.#now();
    queue.arrivals.observe(now);
    queue.meanRows += 0.1 * (rows - queue.meanRows);
    return new Promise((resolve, reject) => {
      queue.groups.push({
        work,
        rows,
        enqueuedAt: now,
        saturationAt: this.#saturation(now),
        queueMs: 0,
        batchMs: 0,
        resolve,
        reject,
        onBatch,
      });
      this.#waiting.add(queue);
      this.#schedule();
    });
  }

  /** Forgets an idle queue (its statistics go with it); false while it holds work. */
  drop(key: string): boolean {
    const queue = this.#queues.get(key);
    if (!queue) return true;
    if (queue.groups.length > 0) return false;
    this.#queues.delete(key);
    return true;
  }

  /** Statistics of every queue seen so far. */
  stats(): QueueBatchStats[] {
    const now = this.#now();
    return [...this.#queues.values()].map((queue) => ({
      ...queue.stats,
      formedBatches: [...queue.stats.formedBatches].map((count) => count ?? 0),
      queuedGroups: queue.groups.length,
      target: queue.target,
      arrivalPerS: queue.arrivals.perMs(now) * 1000,
      service: queue.service.coefficients,
    }));
  }

  /** Measured host-thread milliseconds per execution. */
  hostMsPerExecution(): number {
    return this.#hostMs;
  }

  /** The busy clock: Σ ms during which at least one execution ran, up to now. */
  busyClock(): number {
    const now = this.#now();
    return this.#busyMs + (this.#busySince === null ? 0 : now - this.#busySince);
  }

  /** Whether nothing waits and an execution place is free (new work would start at once). */
  idle(): boolean {
    return this.#waiting.size === 0 && this.#running < this.#kernel.slots;
  }

  /** Current batching window (ms) of the policy. */
  windowMs(): number {
    return this.#policy.windowMs();
  }

  #view(queue: Queue<W, R>, now: number): QueueView {
    return {
      groups: queue.groups.length,
      headWaitMs: queue.groups.length > 0 ? now - queue.groups[0]!.enqueuedAt : 0,
      arrivalPerMs: queue.arrivals.perMs(now),
      meanRows: queue.meanRows,
      serviceMs: (rows) => queue.service.predict(rows),
      entry: queue.entry,
    };
  }

  /**
   * Lets the policy re-plan from all queues' traffic and refreshes every queue's
   * target, at most every `PLAN_EVERY_MS` (the hot path below only compares numbers).
   */
  #plan(now: number): void {
    if (now - this.#plannedAt < PLAN_EVERY_MS) return;
    this.#plannedAt = now;
    const queues = [...this.#queues.values()];
    const views = queues.map((queue) => this.#view(queue, now));
    this.#policy.plan(views, {
      slots: this.#kernel.slots,
      hostMsPerExecution: this.#hostMs,
      sharedThread: this.#kernel.sharedThread,
    });
    queues.forEach((queue, i) => {
      queue.target = this.#policy.target(views[i]!);
      queue.window = this.#policy.queueWindow?.(views[i]!) ?? this.#policy.windowMs();
    });
  }

  #schedule(): void {
    if (this.#settling) return;
    while (this.#running < this.#kernel.depth) {
      const now = this.#now();
      this.#plan(now);
      let best: Queue<W, R> | null = null;
      let soonest = Infinity;
      for (const queue of this.#waiting) {
        const headWaitMs = now - queue.groups[0]!.enqueuedAt;
        const decision = this.#policy.decide(
          { groups: queue.groups.length, headWaitMs },
          queue.target,
          queue.window,
        );
        if (decision.dispatch) {
          if (
            !best || queue.priority > best.priority ||
            (queue.priority === best.priority &&
              queue.groups[0]!.enqueuedAt < best.groups[0]!.enqueuedAt)
          ) best = queue;
        } else {
          soonest = Math.min(soonest, decision.waitMs);
        }
      }
      if (!best) {
        if (Number.isFinite(soonest)) this.#arm(now + soonest);
        return;
      }
      this.#dispatch(best, now);
    }
  }

  /** The saturation clock: Σ ms during which every execution place was taken, up to `now`. */
  #saturation(now: number): number {
    return this.#saturatedMs + (this.#saturatedSince === null ? 0 : now - this.#saturatedSince);
  }

  #arm(at: number): void {
    if (this.#timer && this.#timer.at <= at) return;
    if (this.#timer) this.#clearTimer(this.#timer.id);
    const id = this.#setTimer(() => {
      this.#timer = null;
      this.#schedule();
    }, Math.max(at - this.#now(), 0));
    this.#timer = { id, at };
  }

  #dispatch(queue: Queue<W, R>, now: number): void {
    const taken: Group<W, R>[] = [];
    let rows = 0;
    while (
      queue.groups.length > 0 && taken.length < this.#policy.maxGroups &&
      (taken.length === 0 || rows + queue.groups[0]!.rows <= this.#maxRows)
    ) {
      const group = queue.groups.shift()!;
      taken.push(group);
      rows += group.rows;
    }
    if (queue.groups.length === 0) this.#waiting.delete(queue);
    const stats = queue.stats;
    stats.formedBatches[taken.length] = (stats.formedBatches[taken.length] ?? 0) + 1;
    stats.executions++;
    stats.groups += taken.length;
    stats.rows += rows;
    const saturation = this.#saturation(now);
    for (const group of taken) {
      const delay = now - group.enqueuedAt;
      stats.queueDelayMsSum += delay;
      stats.queueDelayMsMax = Math.max(stats.queueDelayMsMax, delay);
      group.queueMs = Math.min(delay, saturation - group.saturationAt);
      group.batchMs = delay - group.queueMs;
      stats.busyWaitMsSum += group.queueMs;
    }
    this.#running++;
    if (this.#busySince === null) this.#busySince = now;
    if (this.#running >= this.#kernel.depth && this.#saturatedSince === null) {
      this.#saturatedSince = now;
    }
    void this.#execute(queue, taken, rows);
  }

  async #execute(queue: Queue<W, R>, taken: Group<W, R>[], rows: number): Promise<void> {
    const startedAt = this.#now();
    try {
      const pending = this.#kernel.execute(queue.key, taken.map((group) => group.work), rows);
      const dispatchMs = this.#now() - startedAt;
      const run = await pending;
      const resumedAt = this.#now();
      queue.service.observe(rows, run.ms);
      queue.stats.executionMsSum += run.ms;
      const results = run.split();
      const runMs = resumedAt - startedAt;
      taken.forEach((group, i) => {
        group.onBatch?.({
          groups: taken.length,
          queueMs: group.queueMs,
          batchMs: group.batchMs,
          execMs: run.ms,
          runMs,
        });
        group.resolve(results[i]!);
      });
      // Host-thread time of this execution: assembling and hand-off before, split after.
      const hostMs = dispatchMs + (this.#now() - resumedAt);
      this.#hostMs += 0.05 * (hostMs - this.#hostMs);
    } catch (error) {
      for (const group of taken) group.reject(error as Error);
    } finally {
      this.#running--;
      const settle = taken.length > 1 || this.#waiting.size > 0;
      const now = this.#now();
      if (this.#saturatedSince !== null && this.#running < this.#kernel.depth) {
        this.#saturatedMs += now - this.#saturatedSince;
        this.#saturatedSince = null;
      }
      if (this.#busySince !== null && this.#running === 0) {
        this.#busyMs += now - this.#busySince;
        this.#busySince = null;
      }
      if (settle) {
        this.#settling = true;
        this.#defer(() => {
          this.#settling = false;
          this.#schedule();
        });
      }
    }
  }
}
