import assert from "node:assert/strict";
import fc from "fast-check";
import { TimerQueue, type TimerQueueRuntime } from "./timer_queue.ts";

/** A runtime whose time moves only when told; its timers fire in due order. */
class FakeRuntime implements TimerQueueRuntime {
  time = 0;
  timers = new Map<number, { at: number; callback: () => void }>();
  armedCount = 0;
  #next = 1;
  now = () => this.time;
  setTimeout = (callback: () => void, delayMs: number) => {
    const id = this.#next++;
    this.timers.set(id, { at: this.time + delayMs, callback });
    this.armedCount++;
    return id;
  };
  clearTimeout = (handle: unknown) => {
    this.timers.delete(handle as number);
  };
  advanceTo(time: number): void {
    for (;;) {
      const next = [...this.timers].sort((a, b) => a[1].at - b[1].at)[0];
      if (next === undefined || next[1].at > time) break;
      this.timers.delete(next[0]);
      this.time = Math.max(this.time, next[1].at);
      next[1].callback();
    }
    this.time = time;
  }
}

Deno.test("TimerQueue fires each timer once, at or after its delay, in due then arming order", () => {
  const runtime = new FakeRuntime();
  const queue = new TimerQueue(runtime);
  const fired: [string, number][] = [];
  const at = (name: string) => () => fired.push([name, runtime.time]);
  queue.setTimeout(at("a"), 30);
  queue.setTimeout(at("b"), 10);
  queue.setTimeout(at("c"), 10);
  queue.setTimeout(at("d"), 0);
  runtime.advanceTo(100);
  assert.deepEqual(fired, [["d", 0], ["b", 10], ["c", 10], ["a", 30]]);
  assert.equal(queue.armed, 0);
  assert.equal(runtime.timers.size, 0);
});

Deno.test("TimerQueue: cleared timers never fire; none armed leaves no runtime timer", () => {
  const runtime = new FakeRuntime();
  const queue = new TimerQueue(runtime);
  const fired: string[] = [];
  const a = queue.setTimeout(() => fired.push("a"), 10);
  const b = queue.setTimeout(() => fired.push("b"), 20);
  queue.clearTimeout(a);
  queue.clearTimeout(a); // twice: ignored
  assert.equal(queue.armed, 1);
  runtime.advanceTo(15);
  assert.deepEqual(fired, []);
  queue.clearTimeout(b);
  assert.equal(queue.armed, 0);
  assert.equal(runtime.timers.size, 0);
  runtime.advanceTo(100);
  assert.deepEqual(fired, []);
  queue.clearTimeout(undefined); // foreign handles: ignored
});

Deno.test("TimerQueue keeps one runtime timer for many timeouts of one delay, cleared at once", () => {
  const runtime = new FakeRuntime();
  const queue = new TimerQueue(runtime);
  // One request per ms, each timeout cleared 2 ms after arming; one stays armed.
  const survivor = queue.setTimeout(() => {}, 10_000);
  for (let t = 1; t <= 5000; t++) {
    runtime.advanceTo(t);
    const timer = queue.setTimeout(() => assert.fail("a cleared timer fired"), 10_000);
    runtime.advanceTo(t + 0.5);
    queue.clearTimeout(timer);
  }
  assert.equal(runtime.armedCount, 1);
  queue.clearTimeout(survivor);
  assert.equal(runtime.timers.size, 0);
});

Deno.test("TimerQueue matches runtime timers on random schedules", () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant("set" as const), delay: fc.integer({ min: -5, max: 50 }) }),
    fc.record({ kind: fc.constant("clear" as const), index: fc.nat(30) }),
    fc.record({ kind: fc.constant("advance" as const), by: fc.integer({ min: 0, max: 30 }) }),
  );
  fc.assert(fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
    const runtime = new FakeRuntime();
    const queue = new TimerQueue(runtime);
    const handles: unknown[] = [];
    const expected: { id: number; due: number; cleared: boolean }[] = [];
    const fired: [number, number][] = [];
    for (const o of ops) {
      if (o.kind === "set") {
        const id = expected.length;
        expected.push({ id, due: runtime.time + Math.max(0, o.delay), cleared: false });
        handles.push(queue.setTimeout(() => fired.push([id, runtime.time]), o.delay));
      } else if (o.kind === "clear") {
        const target = expected[o.index];
        if (target === undefined) continue;
        if (!fired.some(([id]) => id === target.id)) target.cleared = true;
        queue.clearTimeout(handles[o.index]);
      } else {
        runtime.advanceTo(runtime.time + o.by);
      }
    }
    runtime.advanceTo(runtime.time + 100);
    const want = expected.filter((e) => !e.cleared).sort((a, b) => a.due - b.due || a.id - b.id);
    assert.deepEqual(fired.map(([id]) => id), want.map((e) => e.id));
    for (const [id, time] of fired) assert.ok(time >= expected[id]!.due);
    assert.equal(queue.armed, 0);
    assert.equal(runtime.timers.size, 0);
  }));
});
