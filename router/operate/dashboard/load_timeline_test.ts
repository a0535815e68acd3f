import assert from "node:assert/strict";
import type { PoolLoad } from "../../control/load/pool_load.ts";
import { LoadTimeline } from "./load_timeline.ts";

const T0 = 1_700_000_000_000; // a multiple of 10 000

function load(at: number, layers: number[][], reporting = 2): PoolLoad {
  return {
    at,
    backends: [],
    models: layers.length === 0 ? [] : [{
      model: "m",
      layers: layers.map((rates, layer) => ({
        layer,
        expertTokensPerS: rates,
        balancedness: 0.5,
        expertSkew: { top10Share: 0.25 * (layer + 1), cv: 0 },
      })),
    }],
    pool: {
      reporting,
      balancedness: 0.9,
      worstLayer: { model: "m", layer: 0, balancedness: 0.5 },
      utilisationBalancedness: 0.8,
      utilisationCv: 0.1,
    },
  };
}

Deno.test("LoadTimeline averages rounds per column and keeps layers apart", () => {
  const timeline = new LoadTimeline({ columnMs: 10_000, columns: 6 });
  timeline.record(load(T0, [[10, 0], [1, 1]]));
  timeline.record(load(T0 + 1000, [[20, 2], [3, 3]]));
  timeline.record(load(T0 + 10_000, [[5, 5], [0, 0]]));
  assert.deepEqual(timeline.layer("m", 0), {
    model: "m",
    layer: 0,
    column_ms: 10_000,
    columns: [
      { start: T0, samples: 2, expert_tokens_s: [15, 1] },
      { start: T0 + 10_000, samples: 1, expert_tokens_s: [5, 5] },
    ],
  });
  assert.deepEqual(timeline.layer("m", 1).columns.map((c) => c.expert_tokens_s), [[2, 2], [0, 0]]);
});

Deno.test("LoadTimeline shows no data as null, never as zero load", () => {
  const timeline = new LoadTimeline();
  timeline.record(load(T0, [[4, 4]]));
  timeline.record(load(T0 + 10_000, [], 0));
  const columns = timeline.layer("m", 0).columns;
  assert.deepEqual(columns[1], { start: T0 + 10_000, samples: 0, expert_tokens_s: null });
  assert.deepEqual(timeline.layer("other", 0).columns.map((c) => c.samples), [0, 0]);
  assert.deepEqual(timeline.trend()[1], {
    at: T0 + 10_000,
    pool: null,
    worst: null,
    skew: null,
  });
});

Deno.test("LoadTimeline stays bounded: oldest columns and trend points drop out", () => {
  const timeline = new LoadTimeline({ columnMs: 1000, columns: 3, trendPoints: 4 });
  for (let i = 0; i < 10; i++) timeline.record(load(T0 + i * 1000, [[i]]));
  assert.deepEqual(timeline.layer("m", 0).columns.map((c) => c.expert_tokens_s), [[7], [8], [9]]);
  assert.deepEqual(timeline.trend().map((p) => p.at), [6, 7, 8, 9].map((i) => T0 + i * 1000));
  // Pool and worst-layer balancedness, and expert skew (the mean top-10 % share).
  assert.deepEqual(timeline.trend()[0], { at: T0 + 6000, pool: 0.9, worst: 0.5, skew: 0.25 });
});

Deno.test("LoadTimeline folds a clock step back into the newest column", () => {
  const timeline = new LoadTimeline({ columnMs: 1000 });
  timeline.record(load(T0 + 5000, [[2]]));
  timeline.record(load(T0, [[4]]));
  assert.deepEqual(timeline.layer("m", 0).columns, [
    { start: T0 + 5000, samples: 2, expert_tokens_s: [3] },
  ]);
});

Deno.test("LoadTimeline rejects sizes that are not positive integers", () => {
  assert.throws(() => new LoadTimeline({ columns: 0 }), /columns must be a positive integer/);
  assert.throws(() => new LoadTimeline({ columnMs: 1.5 }), /columnMs must be a positive integer/);
});
