import assert from "node:assert/strict";
import { type BatchInfo, type BatchKernel, BatchQueues } from "./batch_queues.ts";
import { adaptivePolicy, fixedDelayPolicy } from "./policies.ts";

/** A one-slot kernel that records what it ran and answers each group with its work ×2. */
function manualKernel() {
  const ran: { key: string; groups: number[] }[] = [];
  const pending: (() => void)[] = [];
  const kernel: BatchKernel<number, number> = {
    slots: 1,
    depth: 1,
    sharedThread: true,
    execute(key, groups) {
      ran.push({ key, groups: [...groups] });
      return new Promise((resolve) =>
        pending.push(() => resolve({ ms: 1, split: () => groups.map((g) => 2 * g) }))
      );
    },
  };
  const release = async () => {
    pending.shift()?.();
    await new Promise((resolve) => setTimeout(resolve, 0));
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { kernel, ran, release };
}

Deno.test("BatchQueues serves the highest-priority ready queue first, then the oldest head", async () => {
  const { kernel, ran, release } = manualKernel();
  const queues = new BatchQueues({
    kernel,
    policy: fixedDelayPolicy(16, 0),
    priority: (key) => (key === "deep" ? 1 : 0),
  });
  const results = [
    queues.submit("busy", 1, 1),
    queues.submit("shallow", 2, 1),
    queues.submit("deep", 3, 1),
  ];
  for (let i = 0; i < 3; i++) await release();
  assert.deepEqual(await Promise.all(results), [2, 4, 6]);
  assert.deepEqual(ran.map((r) => r.key), ["busy", "deep", "shallow"]);
});

Deno.test("BatchQueues lets answered groups reach their next queue before it dispatches again", async () => {
  const { kernel, ran, release } = manualKernel();
  const queues = new BatchQueues({
    kernel,
    policy: fixedDelayPolicy(16, 0),
    priority: (key) => (key === "second" ? 1 : 0),
  });
  // Three groups pass "first" together; each goes on to "second" a few promise hops later.
  const pass = async (value: number) => {
    const doubled = await queues.submit("first", value, 1);
    await Promise.resolve();
    await Promise.resolve();
    return await queues.submit("second", doubled, 1);
  };
  const blocker = queues.submit("first", 0, 1);
  const flows = [1, 2, 3].map(pass);
  await release(); // the blocker; the three groups then run as one batch
  await blocker;
  await release();
  await release();
  assert.deepEqual(await Promise.all(flows), [4, 8, 12]);
  assert.deepEqual(ran, [
    { key: "first", groups: [0] },
    { key: "first", groups: [1, 2, 3] },
    { key: "second", groups: [2, 4, 6] },
  ]);
});

for (const fillWaitMs of [0, 3]) {
  Deno.test(`an entry queue with fill_wait_ms ${fillWaitMs} answers every group once, correctly, within max_wait_ms`, async () => {
    const { kernel, ran, release } = manualKernel();
    let now = 0;
    const timers: { at: number; fn: () => void }[] = [];
    const queues = new BatchQueues({
      kernel,
      policy: adaptivePolicy({ min: 2, max: 16, maxWaitMs: 4, latencyBudgetMs: 50, fillWaitMs }),
      entry: (key) => key === "entry",
      now: () => now,
      setTimer: (fn, ms) => timers.push({ at: now + ms, fn }) - 1,
      clearTimer: (id) => {
        if (timers[id]) timers[id]!.fn = () => {};
      },
    });
    const advance = async (to: number) => {
      now = to;
      for (const timer of timers) {
        if (timer.at > now) continue;
        const fn = timer.fn;
        timer.fn = () => {};
        timer.at = Infinity;
        fn();
      }
      await new Promise((resolve) => setTimeout(resolve, 0));
    };
    // A blocker holds the one slot while nine more arrive 0.1 ms apart (the rate).
    const answers = [queues.submit("entry", 0, 1)];
    for (let i = 1; i < 10; i++) {
      await advance(i * 0.1);
      answers.push(queues.submit("entry", i, 1));
    }
    await advance(6);
    await release(); // the blocker; the nine queued ones go as one batch
    await release();
    // Three late arrivals, 0.5 ms apart, each finding the slot free.
    for (const [i, value] of [100, 101, 102].entries()) {
      await advance(6 + 0.5 * i);
      answers.push(queues.submit("entry", value, 1));
      await release(); // answers what runs (nothing while the fill holds the wave)
    }
    await advance(6 + 4); // max_wait_ms after the first late one: nothing may still wait
    assert.equal(queues.stats()[0]!.queuedGroups, 0);
    for (let i = 0; i < 4; i++) await release();
    const values = [...Array(10).keys(), 100, 101, 102];
    assert.deepEqual(await Promise.all(answers), values.map((v) => 2 * v));
    assert.deepEqual(ran.flatMap((r) => r.groups), values);
    const late = ran.filter((r) => r.groups.some((g) => g >= 100)).map((r) => r.groups);
    // With the fill they wait for each other; without it the first goes alone at once.
    assert.deepEqual(late, fillWaitMs > 0 ? [[100, 101, 102]] : [[100], [101], [102]]);
  });
}

Deno.test("BatchQueues splits a group's wait into queueing (every place taken) and batching (a place free)", async () => {
  const { kernel, release } = manualKernel();
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  const queues = new BatchQueues({
    kernel,
    // Waits up to 4 ms for a batch of 2.
    policy: fixedDelayPolicy(2, 4),
    now: () => now,
    setTimer: (fn, ms) => timers.push({ at: now + ms, fn }),
    clearTimer: () => {},
  });
  const heard: BatchInfo[] = [];
  // A lone group waits the whole window with the place free: batching, not queueing.
  const lone = queues.submit("q", 1, 1, (b) => heard.push(b));
  now = 4;
  timers.shift()!.fn();
  // While it runs (the only place taken), another group waits 3 ms: queueing.
  now = 5;
  const second = queues.submit("q", 2, 1, (b) => heard.push(b));
  now = 8;
  await release();
  await lone;
  // Then its window runs out with the place free: 1 ms of batching.
  now = 9;
  timers.at(-1)!.fn();
  await release();
  await second;
  assert.deepEqual(heard.map((b) => [b.groups, b.queueMs, b.batchMs, b.execMs]), [
    [1, 0, 4, 1],
    [1, 3, 1, 1],
  ]);
});

Deno.test("BatchQueues' busy clock runs while an execution runs, and idle() says when work would start at once", async () => {
  const { kernel, release } = manualKernel();
  let now = 0;
  const queues = new BatchQueues({
    kernel,
    policy: fixedDelayPolicy(1, 0),
    now: () => now,
    setTimer: () => 0,
    clearTimer: () => {},
  });
  assert.equal(queues.idle(), true);
  const first = queues.submit("q", 1, 1);
  const second = queues.submit("q", 2, 1);
  assert.equal(queues.idle(), false, "one runs, one waits");
  now = 3;
  assert.equal(queues.busyClock(), 3);
  await release();
  await first;
  now = 5;
  await release();
  await second;
  now = 9;
  assert.equal(queues.busyClock(), 5, "busy 0–5, idle since");
  assert.equal(queues.idle(), true);
});
