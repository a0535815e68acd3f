/**
 * @module The adaptive micro-batching control law (pure).
 *
 * Idea: batch exactly as much as the load needs, and no more. One quantity, the
 * batching window `W` (ms), says how long a queue's first group may wait for company.
 * With `W`, a queue receiving λ groups/ms expects batches of `B(W) = 1 + λ·W` groups
 * (clamped to `max`), and its demand on the executors is `λ · s(B·r̄) / B` slot-ms per
 * ms, where `s(n) = a + b·n` is the measured service time of `n` rows and r̄ the mean
 * rows per group. Larger batches amortise the fixed cost `a`, so the predicted
 * utilisation `U(W) = Σ_queues λ·s(B·r̄)/B ÷ slots` falls as `W` grows. The host
 * thread that feeds the executors pays a cost `h` per execution too (hand-off,
 * concatenation, splitting); its utilisation `Σ λ·h/B` counts the same way, and the
 * law uses the larger of the two — or their sum when executions run on that same
 * thread (main-thread onnxruntime: one thread does both, one after the other).
 *
 * Service curve. For a per-expert queue `s(n)` is one expert's time for n rows. For a
 * layer executable (one queue per layer, `n` = the batch's input rows) it is the whole
 * layer's: a fixed part (the run call, gathering and scattering), then per row the
 * routed experts' and shared experts' arithmetic plus the weights of experts a batch
 * touches for the first time — many at small `n`, none once every hosted expert is
 * busy. That makes the true curve concave; the online least-squares line fitted over
 * recent batches is its tangent around the batch sizes actually seen, which is where
 * the law evaluates it (a batch of `B·r̄` rows near the current operating point).
 *
 * The law picks the smallest `W` in `[0, maxWaitMs]` with `U(W) ≤ ρ*` (0.7), or
 * `maxWaitMs` when even that cannot reach ρ*. At low load `W = 0`: nothing waits, the
 * batcher behaves like no batching. As load rises `W` grows just enough to keep the
 * executors below saturation; past saturation it is `maxWaitMs` and batches grow
 * further on their own, because queues fill while every slot is busy. `W` is also
 * capped so that waiting plus executing a batch fits the latency budget.
 *
 * Filling the entry (`fillWaitMs`, off at 0). The window above only ever waits when
 * the executors near saturation. On a backend whose one thread both serves HTTP and
 * runs onnxruntime, a wave that starts the moment the thread frees holds only the
 * requests whose bodies were already decoded; others are mid-parse. An entry queue (new
 * requests, not rows already inside the model) may then wait up to `fillWaitMs` for
 * company — only while its arrival rate predicts at least one more group in that time
 * (`λ·fill ≥ 1`), so a lone client (λ = 1 / its latency) never waits when `fill` is
 * below its latency. The wait lets the thread decode the pending requests; the wave
 * that follows is fuller.
 *
 * Invariants (property-tested): 0 ≤ W ≤ maxWaitMs (the entry window too: the fill is
 * capped at maxWaitMs); W is monotone non-decreasing when arrival rates grow; 1 ≤
 * target ≤ max and target ≥ min once batching engages; a dispatch decision never lets
 * a head group wait past W (hence past maxWaitMs).
 */

/** Operator bounds of the batcher. */
export interface BatchBounds {
  /** Smallest batch (groups) worth waiting for once batching engages. */
  min: number;
  /** Largest batch (groups). */
  max: number;
  /** Longest the first queued group may wait for its batch to fill. */
  maxWaitMs: number;
  /** Budget for waiting plus executing one batch. */
  latencyBudgetMs: number;
  /** Longest an entry queue's head waits for company while more are expected (0 = off). */
  fillWaitMs?: number;
}

/** What the law knows about one queue's traffic. */
export interface QueueLoad {
  /** Arrivals of request groups per ms. */
  arrivalPerMs: number;
  /** Mean rows per group. */
  meanRows: number;
  /** Service time of `n` rows in ms. */
  serviceMs: (rows: number) => number;
}

/** Executor utilisation the law aims to stay under. */
export const TARGET_UTILISATION = 0.7;
/** Window candidates per `maxWaitMs` (the search grid). */
const WINDOW_STEPS = 16;

/** Groups a queue expects in one batch with window `windowMs`, within `[1, max]`. */
export function expectedBatch(arrivalPerMs: number, windowMs: number, max: number): number {
  return Math.min(Math.max(1 + arrivalPerMs * windowMs, 1), max);
}

/** What the executors and their host thread can do. */
export interface Capacity {
  /** Executions that run at the same time. */
  slots: number;
  /** Host-thread milliseconds spent per execution (dispatch and completion). */
  hostMsPerExecution: number;
  /** Executions run on the host thread itself (its busy time is device + host time). */
  sharedThread?: boolean;
}

/**
 * Predicted busy fraction of the executors, or of the host thread if that is higher,
 * when every queue batches with `windowMs`.
 */
export function predictedUtilisation(
  queues: readonly QueueLoad[],
  windowMs: number,
  capacity: Capacity,
  max: number,
): number {
  let device = 0;
  let executions = 0;
  for (const q of queues) {
    if (!(q.arrivalPerMs > 0)) continue;
    const batch = expectedBatch(q.arrivalPerMs, windowMs, max);
    device += (q.arrivalPerMs * q.serviceMs(batch * q.meanRows)) / batch;
    executions += q.arrivalPerMs / batch;
  }
  const host = executions * capacity.hostMsPerExecution;
  return capacity.sharedThread
    ? device / capacity.slots + host
    : Math.max(device / capacity.slots, host);
}

/** The batching window (ms) for the current traffic. */
export function batchingWindow(
  queues: readonly QueueLoad[],
  capacity: Capacity,
  bounds: BatchBounds,
): number {
  // Waiting W then executing the largest expected batch must fit the latency budget.
  const slowest = Math.max(0, ...queues.map((q) => q.serviceMs(bounds.max * q.meanRows)));
  const ceiling = Math.max(0, Math.min(bounds.maxWaitMs, bounds.latencyBudgetMs - slowest));
  for (let step = 0; step <= WINDOW_STEPS; step++) {
    const windowMs = (ceiling * step) / WINDOW_STEPS;
    if (predictedUtilisation(queues, windowMs, capacity, bounds.max) <= TARGET_UTILISATION) {
      return windowMs;
    }
  }
  return ceiling;
}

/**
 * The window of an entry queue: `windowMs` (the law's), or the fill wait
 * `min(fillWaitMs, maxWaitMs)` when that is longer and the queue expects at least one
 * more group within it (`arrivalPerMs · fill ≥ 1`).
 */
export function entryWindow(arrivalPerMs: number, windowMs: number, bounds: BatchBounds): number {
  const fill = Math.min(bounds.fillWaitMs ?? 0, bounds.maxWaitMs);
  return fill > windowMs && arrivalPerMs * fill >= 1 ? fill : windowMs;
}

/** The batch size (groups) a queue waits for under window `windowMs`. */
export function targetBatchSize(
  arrivalPerMs: number,
  windowMs: number,
  bounds: BatchBounds,
): number {
  if (windowMs <= 0) return 1;
  const expected = Math.ceil(expectedBatch(arrivalPerMs, windowMs, bounds.max) - 1e-9);
  return Math.min(Math.max(expected, bounds.min), bounds.max);
}

/** State of one queue at a decision point. */
export interface QueueState {
  groups: number;
  /** How long the head group has waited, ms. */
  headWaitMs: number;
}

/** Decision: dispatch now, or wait at most `waitMs` before deciding again. */
export type DispatchDecision = { dispatch: true } | { dispatch: false; waitMs: number };

/** Decides for a queue when an executor slot is free. */
export function decideDispatch(
  state: QueueState,
  target: number,
  windowMs: number,
): DispatchDecision {
  if (state.groups === 0) return { dispatch: false, waitMs: Infinity };
  if (state.groups >= target || state.headWaitMs >= windowMs) return { dispatch: true };
  return { dispatch: false, waitMs: windowMs - state.headWaitMs };
}
