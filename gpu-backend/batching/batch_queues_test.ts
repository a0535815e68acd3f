import assert from "node:assert/strict";
import { type BatchKernel, BatchQueues } from "./batch_queues.ts";
import { fixedDelayPolicy } from "./policies.ts";

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
