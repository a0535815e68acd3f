import assert from "node:assert/strict";
import fc from "fast-check";
import { uniformWaveFeeds } from "./uniform_wave.ts";

Deno.test("a uniform wave gives every expert r rows and every row distinct experts", () => {
  fc.assert(fc.property(
    fc.integer({ min: 1, max: 40 }),
    fc.integer({ min: 2, max: 16 }),
    fc.integer({ min: 1, max: 4 }),
    (r, experts, topK) => {
      fc.pre(topK <= experts);
      const { rows, feeds } = uniformWaveFeeds({ rowsPerExpert: r, experts, topK, dModel: 3 });
      const src = feeds.src!.data as Int32Array;
      const counts = feeds.counts!.data as Int32Array;
      assert.deepEqual([...counts], new Array(experts).fill(r));
      assert.equal(src.length, r * experts);
      const seen = Array.from({ length: rows }, () => new Set<number>());
      src.forEach((row, a) => {
        assert.ok(row >= 0 && row < rows);
        const expert = Math.floor(a / r);
        assert.ok(!seen[row]!.has(expert), `row ${row} sees expert ${expert} twice`);
        seen[row]!.add(expert);
      });
      for (const experts of seen) assert.ok(experts.size >= 1 && experts.size <= topK);
      assert.deepEqual(feeds.rows!.dims, [rows, 3]);
    },
  ));
});

Deno.test("a uniform wave refuses a fill it cannot build", () => {
  assert.throws(
    () => uniformWaveFeeds({ rowsPerExpert: 0, experts: 4, topK: 2, dModel: 2 }),
    /rowsPerExpert 0/,
  );
  assert.throws(
    () => uniformWaveFeeds({ rowsPerExpert: 1, experts: 1, topK: 2, dModel: 2 }),
    /top_k 2/,
  );
});
