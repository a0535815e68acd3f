import assert from "node:assert/strict";
import fc from "fast-check";
import { countsWaveFeeds, zipfCounts } from "./skewed_wave.ts";

Deno.test("zipfCounts() sums to the total, never rises with rank, and is flat at s = 0", () => {
  fc.assert(fc.property(
    fc.integer({ min: 1, max: 64 }),
    fc.integer({ min: 0, max: 500 }),
    fc.double({ min: 0, max: 2, noNaN: true }),
    (experts, total, s) => {
      const counts = zipfCounts(experts, total, s);
      assert.equal(counts.reduce((a, b) => a + b, 0), total);
      for (let e = 1; e < experts; e++) assert.ok(counts[e]! <= counts[e - 1]! + 1);
    },
  ));
  assert.deepEqual([...zipfCounts(4, 8, 0)], [2, 2, 2, 2]);
  assert.deepEqual([...zipfCounts(3, 11, 1)], [6, 3, 2]);
});

Deno.test("a counts wave gives expert e counts[e] rows, each row distinct experts, ≤ top_k", () => {
  fc.assert(fc.property(
    fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 2, maxLength: 16 }),
    fc.integer({ min: 1, max: 2 }),
    (list, topK) => {
      const counts = Int32Array.from(list);
      const { rows, feeds } = countsWaveFeeds(counts, topK, 3);
      const src = feeds.src!.data as Int32Array;
      const seen = Array.from({ length: rows }, () => new Set<number>());
      let a = 0;
      counts.forEach((count, expert) => {
        for (let j = 0; j < count; j++, a++) {
          const row = src[a]!;
          assert.ok(row >= 0 && row < rows);
          assert.ok(!seen[row]!.has(expert));
          seen[row]!.add(expert);
        }
      });
      for (const set of seen) assert.ok(set.size <= topK);
      assert.deepEqual(feeds.rows!.dims, [rows, 3]);
    },
  ));
});
