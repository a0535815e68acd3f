import assert from "node:assert/strict";
import fc from "fast-check";
import { EventQueue } from "./event_queue.ts";

Deno.test("EventQueue pops by time, equal times in insertion order", () => {
  const queue = new EventQueue<string>();
  queue.push(5, "c");
  queue.push(1, "a");
  queue.push(5, "d");
  queue.push(3, "b");
  assert.equal(queue.size, 4);
  assert.equal(queue.peek()?.event, "a");
  const order: string[] = [];
  for (let e = queue.pop(); e !== undefined; e = queue.pop()) order.push(e.event);
  assert.deepEqual(order, ["a", "b", "c", "d"]);
  assert.equal(queue.pop(), undefined);
  assert.throws(() => queue.push(Number.NaN, "x"), RangeError);
});

Deno.test("EventQueue yields any push sequence sorted by (time, insertion)", () => {
  fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }), (times) => {
    const queue = new EventQueue<number>();
    times.forEach((t, i) => queue.push(t, i));
    const popped: [number, number][] = [];
    for (let e = queue.pop(); e !== undefined; e = queue.pop()) popped.push([e.at, e.event]);
    const expected = times.map((t, i) => [t, i] as [number, number])
      .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    assert.deepEqual(popped, expected);
  }));
});
