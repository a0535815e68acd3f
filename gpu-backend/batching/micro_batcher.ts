/**
 * @module Per-part micro-batching in front of an executor.
 *
 * Every model part (gate, routed expert, shared expert) has a queue of request
 * groups (the rows one request sends to that part). The batcher owns the executor's
 * capacity: it keeps at most `executor.depth` executions outstanding and, whenever a
 * place is free, asks the policy which queue to serve — the one whose head has waited longest among
 * those ready — and takes up to `policy.maxGroups` groups (and `maxRowsPerBatch`
 * rows) into one execution. While all slots are busy, queues keep growing, so the
 * next batch forms while the current one runs. Results are split back per group.
 */
import { type ModelPart, modelPartKey } from "../../shared/model_manifest.ts";
import type { ExpertExecutor } from "../execution/executor.ts";
import type { BatchObserver, PartRunner } from "../moe/forward.ts";
import { ArrivalRate, ServiceCurve } from "./estimators.ts";
import type { BatchPolicy, QueueView } from "./policies.ts";

/** Options of {@linkcode MicroBatcher}. */
export interface MicroBatcherOptions {
  executor: ExpertExecutor;
  policy: BatchPolicy;
  /** Row cap of one execution (a single larger group still runs alone). */
  maxRowsPerBatch?: number;
  /** Service-time prior before measurements exist. */
  priorService?: { fixedMs: number; perRowMs: number };
  /** Clock in ms; default `performance.now`. */
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => number;
  clearTimer?: (id: number) => void;
}

/** How often the policy re-plans from the traffic (ms). */
const PLAN_EVERY_MS = 5;

interface Group {
  input: Float32Array;
  rows: number;
  enqueuedAt: number;
  resolve: (output: Float32Array) => void;
  reject: (error: Error) => void;
  /** Told how many groups the execution coalesced (the request's batch trace). */
  onBatch: BatchObserver | undefined;
}

/** Per-part batching statistics. */
export interface PartBatchStats {
  part: string;
  /** `formedBatches[n]` = executions that coalesced n groups. */
  formedBatches: number[];
  executions: number;
  groups: number;
  rows: number;
  queueDelayMsSum: number;
  queueDelayMsMax: number;
  executionMsSum: number;
  queuedGroups: number;
  target: number;
  arrivalPerS: number;
  service: { fixedMs: number; perRowMs: number };
}

class PartQueue {
  readonly groups: Group[] = [];
  readonly arrivals = new ArrivalRate();
  readonly service: ServiceCurve;
  meanRows = 1;
  target = 1;
  stats: Omit<PartBatchStats, "queuedGroups" | "target" | "arrivalPerS" | "service">;

  constructor(readonly part: ModelPart, key: string, prior: { fixedMs: number; perRowMs: number }) {
    this.service = new ServiceCurve(prior);
    this.stats = {
      part: key,
      formedBatches: [],
      executions: 0,
      groups: 0,
      rows: 0,
      queueDelayMsSum: 0,
      queueDelayMsMax: 0,
      executionMsSum: 0,
    };
  }
}

/** Coalesces concurrent work per model part into micro-batches. */
export class MicroBatcher implements PartRunner {
  readonly #executor: ExpertExecutor;
  readonly #policy: BatchPolicy;
  readonly #slots: number;
  readonly #depth: number;
  readonly #maxRows: number;
  readonly #prior: { fixedMs: number; perRowMs: number };
  readonly #now: () => number;
  readonly #setTimer: (fn: () => void, ms: number) => number;
  readonly #clearTimer: (id: number) => void;
  readonly #queues = new Map<string, PartQueue>();
  /** Queues holding at least one group. */
  readonly #waiting = new Set<PartQueue>();
  #running = 0;
  #plannedAt = -Infinity;
  /** Host-thread ms per execution: concatenation, hand-off, splitting (EWMA). */
  #hostMs = 0;
  #timer: { id: number; at: number } | null = null;

  constructor(options: MicroBatcherOptions) {
    this.#executor = options.executor;
    this.#policy = options.policy;
    this.#slots = options.executor.slots;
    this.#depth = options.executor.depth;
    this.#maxRows = options.maxRowsPerBatch ?? 1024;
    this.#prior = options.priorService ?? { fixedMs: 0.1, perRowMs: 0.02 };
    this.#now = options.now ?? (() => performance.now());
    this.#setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms) as unknown as number);
    this.#clearTimer = options.clearTimer ?? ((id) => clearTimeout(id));
  }

  /** The policy in use. */
  get policy(): BatchPolicy {
    return this.#policy;
  }

  run(
    part: ModelPart,
    input: Float32Array,
    rows: number,
    onBatch?: BatchObserver,
  ): Promise<Float32Array> {
    const key = modelPartKey(part);
    let queue = this.#queues.get(key);
    if (!queue) {
      queue = new PartQueue(part, key, this.#prior);
      this.#queues.set(key, queue);
    }
    const now = this.#now();
    queue.arrivals.observe(now);
    queue.meanRows += 0.1 * (rows - queue.meanRows);
    return new Promise((resolve, reject) => {
      queue.groups.push({ input, rows, enqueuedAt: now, resolve, reject, onBatch });
      this.#waiting.add(queue);
      this.#schedule();
    });
  }

  /** Statistics of every part seen so far. */
  stats(): PartBatchStats[] {
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

  /** Current batching window (ms) of the policy. */
  windowMs(): number {
    return this.#policy.windowMs();
  }

  #view(queue: PartQueue, now: number): QueueView {
    return {
      groups: queue.groups.length,
      headWaitMs: queue.groups.length > 0 ? now - queue.groups[0]!.enqueuedAt : 0,
      arrivalPerMs: queue.arrivals.perMs(now),
      meanRows: queue.meanRows,
      serviceMs: (rows) => queue.service.predict(rows),
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
    this.#policy.plan(views, { slots: this.#slots, hostMsPerExecution: this.#hostMs });
    queues.forEach((queue, i) => queue.target = this.#policy.target(views[i]!));
  }

  #schedule(): void {
    while (this.#running < this.#depth) {
      const now = this.#now();
      this.#plan(now);
      let best: PartQueue | null = null;
      let soonest = Infinity;
      for (const queue of this.#waiting) {
        const headWaitMs = now - queue.groups[0]!.enqueuedAt;
        const decision = this.#policy.decide(
          { groups: queue.groups.length, headWaitMs },
          queue.target,
        );
        if (decision.dispatch) {
          if (!best || queue.groups[0]!.enqueuedAt < best.groups[0]!.enqueuedAt) best = queue;
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

  #arm(at: number): void {
    if (this.#timer && this.#timer.at <= at) return;
    if (this.#timer) this.#clearTimer(this.#timer.id);
    const id = this.#setTimer(() => {
      this.#timer = null;
      this.#schedule();
    }, Math.max(at - this.#now(), 0));
    this.#timer = { id, at };
  }

  #dispatch(queue: PartQueue, now: number): void {
    const taken: Group[] = [];
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
    for (const group of taken) {
      const delay = now - group.enqueuedAt;
      stats.queueDelayMsSum += delay;
      stats.queueDelayMsMax = Math.max(stats.queueDelayMsMax, delay);
    }
    this.#running++;
    void this.#execute(queue, taken, rows);
  }

  async #execute(queue: PartQueue, taken: Group[], rows: number): Promise<void> {
    const startedAt = this.#now();
    let input: Float32Array;
    if (taken.length === 1) {
      input = taken[0]!.input;
    } else {
      input = new Float32Array(taken.reduce((sum, group) => sum + group.input.length, 0));
      let offset = 0;
      for (const group of taken) {
        input.set(group.input, offset);
        offset += group.input.length;
      }
    }
    try {
      const pending = this.#executor.execute(queue.part, input, rows);
      const dispatchMs = this.#now() - startedAt;
      const { output, ms } = await pending;
      const resumedAt = this.#now();
      queue.service.observe(rows, ms);
      queue.stats.executionMsSum += ms;
      const width = output.length / rows;
      let offset = 0;
      for (const group of taken) {
        group.onBatch?.(taken.length);
        group.resolve(output.subarray(offset * width, (offset + group.rows) * width));
        offset += group.rows;
      }
      // Host-thread time of this execution: concatenation and hand-off before, split after.
      const hostMs = dispatchMs + (this.#now() - resumedAt);
      this.#hostMs += 0.05 * (hostMs - this.#hostMs);
    } catch (error) {
      for (const group of taken) group.reject(error as Error);
    } finally {
      this.#running--;
      this.#schedule();
    }
  }
}
