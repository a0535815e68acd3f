import assert from "node:assert/strict";
import fc from "fast-check";
import { EntryCollector, labelsKey } from "./streams_result.ts";

const A = { service: "router" };
const B = { service: "backend", backend: "b1" };

Deno.test("EntryCollector keeps the newest entries backward, the oldest forward, grouped by stream", () => {
  const entries = [5n, 1n, 4n, 2n, 3n].map((ns) => ({
    ns,
    labels: ns % 2n ? A : B,
    line: `l${ns}`,
  }));
  const backward = new EntryCollector(3, "backward");
  for (const entry of entries) backward.add(entry);
  assert.deepEqual(backward.response().data.result, [
    { stream: B, values: [["4", "l4"]] },
    { stream: A, values: [["5", "l5"], ["3", "l3"]] },
  ]);
  const forward = new EntryCollector(3, "forward");
  for (const entry of entries) forward.add(entry);
  assert.deepEqual(forward.response().data.result, [
    { stream: B, values: [["2", "l2"]] },
    { stream: A, values: [["1", "l1"], ["3", "l3"]] },
  ]);
});

Deno.test("EntryCollector returns the same set as sorting everything, for any input", () => {
  fc.assert(fc.property(
    fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 200 }),
    fc.integer({ min: 1, max: 20 }),
    fc.boolean(),
    (times, limit, backward) => {
      const collector = new EntryCollector(limit, backward ? "backward" : "forward");
      times.forEach((t, i) => {
        if (collector.wants(BigInt(t))) collector.add({ ns: BigInt(t), labels: A, line: `${i}` });
      });
      const got = collector.response().data.result.flatMap((s) =>
        s.values.map(([ns]) => Number(ns))
      );
      const expected = [...times].sort((a, b) => (backward ? b - a : a - b)).slice(0, limit);
      assert.deepEqual(got, expected);
    },
  ));
});

Deno.test("labelsKey() sorts labels", () => {
  assert.equal(labelsKey({ level: "info", backend: "b" }), '{backend="b", level="info"}');
});
