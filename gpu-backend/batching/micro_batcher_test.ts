import assert from "node:assert/strict";
import type { ModelPart } from "../../shared/model_manifest.ts";
import type { Execution, ExecutorStats, ExpertExecutor } from "../execution/executor.ts";
import { MicroBatcher } from "./micro_batcher.ts";
import { adaptivePolicy, fixedDelayPolicy, fixedSizePolicy } from "./policies.ts";

/** Fake executor: output = input × (expert + 1); each run completes when released. */
class ManualExecutor implements ExpertExecutor {
  readonly provider = "fake";
  readonly slots: number;
  readonly depth: number;
  readonly batches: { part: ModelPart; rows: number }[] = [];
  readonly #pending: (() => void)[] = [];
  running = 0;
  maxRunning = 0;
  failNext = false;

  constructor(slots = 1) {
    this.slots = slots;
    this.depth = slots;
  }

  execute(part: ModelPart, input: Float32Array, rows: number): Promise<Execution> {
    this.batches.push({ part, rows });
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    const factor = part.kind === "gate" ? 1 : part.expert + 1;
    const fail = this.failNext;
    this.failNext = false;
    return new Promise((resolve, reject) => {
      this.#pending.push(() => {
        this.running--;
        if (fail) reject(new Error("device fault"));
        else resolve({ output: input.map((v) => v * factor), ms: 1 });
      });
    });
  }

  /** Completes the oldest running execution and lets the batcher dispatch what follows. */
  async release(): Promise<void> {
    this.#pending.shift()?.();
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The batcher's next dispatch waits one event-loop turn (a setImmediate) after it.
    await new Promise((resolve) => setImmediate(resolve));
  }

  stats(): ExecutorStats {
    return { slots: 1, executions: 0, rows: 0, busyMs: 0, queued: 0, running: this.running };
  }

  async close(): Promise<void> {}
}

const expert = (e: number): ModelPart => ({ kind: "expert", layer: 0, expert: e });
const bounds = { min: 2, max: 16, maxWaitMs: 2, latencyBudgetMs: 50 };

Deno.test("MicroBatcher coalesces groups that queue while the slot is busy and splits results", async () => {
  const executor = new ManualExecutor(1);
  const batcher = new MicroBatcher({ executor, policy: adaptivePolicy(bounds) });
  const first = batcher.run(expert(1), Float32Array.of(1, 2), 1);
  const rest = [3, 4, 5].map((v) => batcher.run(expert(1), Float32Array.of(v, v, v, v), 2));
  assert.equal(executor.batches.length, 1, "only one execution while the slot is busy");
  await executor.release();
  assert.deepEqual([...(await first)], [2, 4]);
  assert.equal(executor.batches.length, 2);
  assert.equal(executor.batches[1]!.rows, 6, "three groups of 2 rows in one execution");
  await executor.release();
  const outputs = await Promise.all(rest);
  assert.deepEqual(outputs.map((o) => [...o]), [[6, 6, 6, 6], [8, 8, 8, 8], [10, 10, 10, 10]]);
  const stats = batcher.stats().find((s) => s.part === "L0/E1")!;
  assert.equal(stats.formedBatches[1], 1);
  assert.equal(stats.formedBatches[3], 1);
  assert.equal(stats.groups, 4);
  assert.equal(stats.rows, 7);
});

Deno.test("MicroBatcher never runs more executions than slots", async () => {
  const executor = new ManualExecutor(2);
  const batcher = new MicroBatcher({ executor, policy: fixedSizePolicy(1) });
  const results = Array.from(
    { length: 10 },
    (_, i) => batcher.run(expert(i % 4), Float32Array.of(i), 1),
  );
  for (let i = 0; i < 10; i++) await executor.release();
  await Promise.all(results);
  assert.equal(executor.maxRunning, 2);
  assert.equal(executor.batches.length, 10, "fixed-1 never coalesces");
});

Deno.test("MicroBatcher respects the policy's maximum batch size", async () => {
  const executor = new ManualExecutor(1);
  const batcher = new MicroBatcher({ executor, policy: fixedDelayPolicy(4, 1) });
  const results = Array.from(
    { length: 9 },
    (_, i) => batcher.run(expert(0), Float32Array.of(i), 1),
  );
  while (executor.running > 0) await executor.release();
  await Promise.all(results);
  assert.ok(executor.batches.every((b) => b.rows <= 4));
  assert.equal(executor.batches.reduce((sum, b) => sum + b.rows, 0), 9);
});

Deno.test("MicroBatcher serves the queue whose head waited longest first", async () => {
  const executor = new ManualExecutor(1);
  const batcher = new MicroBatcher({ executor, policy: fixedSizePolicy(1) });
  const a = batcher.run(expert(0), Float32Array.of(1), 1);
  const b = batcher.run(expert(5), Float32Array.of(1), 1);
  const c = batcher.run(expert(3), Float32Array.of(1), 1);
  for (let i = 0; i < 3; i++) await executor.release();
  await Promise.all([a, b, c]);
  assert.deepEqual(executor.batches.map((x) => (x.part as { expert: number }).expert), [0, 5, 3]);
});

Deno.test("MicroBatcher rejects every group of a failed batch and keeps serving", async () => {
  const executor = new ManualExecutor(1);
  const batcher = new MicroBatcher({ executor, policy: fixedDelayPolicy(16, 0) });
  const blocker = batcher.run(expert(2), Float32Array.of(1), 1);
  const doomed = Promise.allSettled(
    [1, 2].map((v) => batcher.run(expert(2), Float32Array.of(v), 1)),
  );
  executor.failNext = true;
  await executor.release();
  await blocker;
  assert.equal(executor.batches.length, 2, "the queued pair went out as one batch");
  await executor.release();
  for (const result of await doomed) {
    assert.equal(result.status, "rejected");
    assert.match(String((result as PromiseRejectedResult).reason), /device fault/);
  }
  const after = batcher.run(expert(2), Float32Array.of(4), 1);
  await executor.release();
  assert.deepEqual([...(await after)], [12]);
});

Deno.test("MicroBatcher waits at most max_wait for a partial batch under load", async () => {
  // A steady stream makes the adaptive target > 1; with a free slot the head waits
  // for more groups, but never longer than max_wait (2 ms on a manual clock).
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  const executor = new ManualExecutor();
  const batcher = new MicroBatcher({
    executor,
    policy: adaptivePolicy({ ...bounds, maxWaitMs: 2 }),
    priorService: { fixedMs: 1, perRowMs: 0 },
    now: () => now,
    setTimer: (fn, ms) => timers.push({ at: now + ms, fn }),
    clearTimer: () => {},
  });
  // Build an arrival history of one group every 0.1 ms, all executed one by one.
  const warm: Promise<Float32Array>[] = [];
  for (let i = 0; i < 20; i++) {
    now += 0.1;
    warm.push(batcher.run(expert(7), Float32Array.of(1), 1));
  }
  // Drain: complete executions and fire due timers on the manual clock.
  for (let step = 0; step < 200; step++) {
    if (executor.running > 0) {
      now += 1; // each execution takes 1 ms of manual time
      await executor.release();
    } else if (timers.length > 0) {
      timers.sort((x, y) => x.at - y.at);
      const next = timers.shift()!;
      now = Math.max(now, next.at);
      next.fn();
    } else break;
  }
  await Promise.all(warm);
  const before = executor.batches.length;
  now += 0.1;
  const lone = batcher.run(expert(7), Float32Array.of(1), 1);
  assert.equal(executor.batches.length, before, "the head waits for company");
  const timer = timers.at(-1)!;
  assert.ok(timer.at - now <= 2 + 1e-9, `waits ${timer.at - now} ms`);
  now = timer.at;
  timer.fn();
  assert.equal(executor.batches.length, before + 1, "dispatched at the deadline");
  await executor.release();
  assert.deepEqual([...(await lone)], [8]);
});

Deno.test("MicroBatcher tells every group how many groups its execution coalesced", async () => {
  const executor = new ManualExecutor(1);
  const batcher = new MicroBatcher({ executor, policy: adaptivePolicy(bounds) });
  const heard: number[][] = [[], [], [], []];
  const first = batcher.run(expert(2), Float32Array.of(1), 1, (b) => heard[0]!.push(b.groups));
  const rest = [1, 2, 3].map((i) =>
    batcher.run(expert(2), Float32Array.of(i), 1, (b) => heard[i]!.push(b.groups))
  );
  await executor.release();
  await first;
  await executor.release();
  await Promise.all(rest);
  assert.deepEqual(heard, [[1], [3], [3], [3]]);
});
