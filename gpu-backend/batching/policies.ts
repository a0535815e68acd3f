/**
 * @module Batch policies: how long queues wait for company and how many groups one
 * execution may take. The adaptive policy is Switchyard's default; the fixed-size and
 * fixed-delay policies are baselines for the benchmark (and for operators who want
 * static behaviour).
 */
import {
  type BatchBounds,
  batchingWindow,
  type Capacity,
  decideDispatch,
  type DispatchDecision,
  entryWindow,
  type QueueLoad,
  type QueueState,
  targetBatchSize,
} from "./control_law.ts";

/** What a policy sees of one queue. */
export interface QueueView extends QueueLoad {
  groups: number;
  headWaitMs: number;
  /** New requests enter here (rows already inside the model do not). */
  entry?: boolean;
}

/** A batching policy. */
export interface BatchPolicy {
  readonly name: string;
  /** Most groups one execution takes. */
  readonly maxGroups: number;
  /** Longest a head group may wait (ms) under this policy. */
  readonly maxWaitMs: number;
  /** Re-plans from the traffic of every queue (called every few ms at most). */
  plan(queues: readonly QueueLoad[], capacity: Capacity): void;
  /** Current window in ms (how long a head may wait), for visibility. */
  windowMs(): number;
  /** Target batch size for the queue now. */
  target(queue: QueueView): number;
  /** The queue's own window (ms), when it differs from {@linkcode windowMs}. */
  queueWindow?(queue: QueueView): number;
  /** Dispatch now, or wait (`windowMs`: the queue's own window, default the policy's). */
  decide(queue: QueueState, target: number, windowMs?: number): DispatchDecision;
}

/** The adaptive control law within operator bounds. */
export function adaptivePolicy(bounds: BatchBounds): BatchPolicy {
  let window = 0;
  const queueWindow = (queue: QueueView) =>
    queue.entry ? entryWindow(queue.arrivalPerMs, window, bounds) : window;
  return {
    name: "adaptive",
    maxGroups: bounds.max,
    maxWaitMs: bounds.maxWaitMs,
    plan: (queues, capacity) => {
      window = batchingWindow(queues, capacity, bounds);
    },
    windowMs: () => window,
    target: (queue) => targetBatchSize(queue.arrivalPerMs, queueWindow(queue), bounds),
    queueWindow,
    decide: (queue, target, windowMs) => decideDispatch(queue, target, windowMs ?? window),
  };
}

/** Static policy: wait up to `waitMs` for `target` groups, take at most `maxGroups`. */
function staticPolicy(name: string, maxGroups: number, waitMs: number): BatchPolicy {
  return {
    name,
    maxGroups,
    maxWaitMs: waitMs,
    plan: () => {},
    windowMs: () => waitMs,
    target: () => maxGroups,
    decide: (queue) => decideDispatch(queue, maxGroups, waitMs),
  };
}

/** Static batch of exactly `size` groups; a partial batch goes after `timeoutMs`. */
export function fixedSizePolicy(size: number, timeoutMs = 50): BatchPolicy {
  return staticPolicy(`fixed-${size}`, size, size === 1 ? 0 : timeoutMs);
}

/** Triton-style dynamic batcher: up to `maxGroups`, or whatever is queued after `delayMs`. */
export function fixedDelayPolicy(maxGroups: number, delayMs: number): BatchPolicy {
  return staticPolicy(`delay-${delayMs}ms`, maxGroups, delayMs);
}

/** Parses a policy name: `adaptive`, `fixed-N`, `delay-Dms`. */
export function policyByName(name: string, bounds: BatchBounds): BatchPolicy {
  if (name === "adaptive") return adaptivePolicy(bounds);
  const fixed = /^fixed-(\d+)$/.exec(name);
  if (fixed) return fixedSizePolicy(Number(fixed[1]));
  const delay = /^delay-(\d+(?:\.\d+)?)ms$/.exec(name);
  if (delay) return fixedDelayPolicy(bounds.max, Number(delay[1]));
  throw new RangeError(
    `Cannot use batching policy "${name}": expected adaptive, fixed-N or delay-Dms`,
  );
}
