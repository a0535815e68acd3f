import assert from "node:assert/strict";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { fakeLoadReport } from "../../../tests/_support/router/load_reports.ts";
import { type ExpertLoadBucket, expertLoadKey, LoadHistory } from "./load_history.ts";
import { aggregatePoolLoad } from "./pool_load.ts";
import { reportRates } from "./load_rates.ts";

// 1_700_000_000_000 is a multiple of 10 s, so buckets start on the clock's start.
const T0 = 1_700_000_000_000;

async function withHistory(
  body: (history: LoadHistory, kv: Deno.Kv, clock: ManualClock) => Promise<void>,
  options: { alpha?: number } = {},
): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  try {
    await body(new LoadHistory(kv, { clock, bucketMs: 10_000, ...options }), kv, clock);
  } finally {
    kv.close();
  }
}

Deno.test("LoadHistory.record() keeps the mean of a bucket's vectors under its KV key", async () => {
  await withHistory(async (history, kv, clock) => {
    await history.record("tiny", 0, [10, 0, 2]);
    await clock.advance(1000);
    await history.record("tiny", 0, [20, 4, 2]);
    await clock.advance(9000); // next bucket
    await history.record("tiny", 0, [0, 0, 0]);
    const stored = await kv.get<ExpertLoadBucket>(expertLoadKey("tiny", 0, T0));
    assert.deepEqual(stored.value, {
      model: "tiny",
      layer: 0,
      startMs: T0,
      bucketMs: 10_000,
      samples: 2,
      tokensPerS: [15, 2, 2],
      expiresAt: T0 + 1000 + 3_600_000,
    });
    const window = await history.window("tiny", 0, T0 + 5000);
    assert.deepEqual(window.map((bucket) => [bucket.startMs, bucket.samples]), [
      [T0, 2],
      [T0 + 10_000, 1],
    ]);
    assert.deepEqual(await history.window("tiny", 0, T0 + 10_000), [window[1]]);
    assert.deepEqual(await history.window("tiny", 1, T0), []);
    assert.deepEqual(await history.window("other", 0, T0), []);
  });
});

Deno.test("LoadHistory.window() hides buckets past their expiresAt", async () => {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const history = new LoadHistory(kv, { clock, retentionMs: 60_000 });
  try {
    await history.record("tiny", 0, [1, 2]);
    await clock.advance(30_000);
    await history.record("tiny", 0, [3, 4]);
    assert.equal((await history.window("tiny", 0, T0)).length, 2);
    await clock.advance(30_000);
    // The first bucket's expiresAt (T0 + 60 s) has passed, even if KV still holds it.
    const window = await history.window("tiny", 0, T0);
    assert.deepEqual(window.map((bucket) => bucket.tokensPerS), [[3, 4]]);
  } finally {
    kv.close();
  }
});

Deno.test("LoadHistory.ewma() follows e ← e + α·(x − e) per layer, seeded by the first vector", async () => {
  await withHistory(async (history) => {
    assert.equal(history.ewma("tiny", 0), undefined);
    await history.record("tiny", 0, [10, 0]);
    assert.deepEqual(history.ewma("tiny", 0), [10, 0]);
    await history.record("tiny", 0, [0, 10]);
    assert.deepEqual(history.ewma("tiny", 0), [7.5, 2.5]);
    await history.record("tiny", 1, [4, 4]);
    assert.deepEqual(history.ewma("tiny", 1), [4, 4]);
    assert.deepEqual(history.ewma("tiny", 0), [7.5, 2.5]);
  }, { alpha: 0.25 });
});

Deno.test("LoadHistory: two routers recording one pool share one bucket mean", async () => {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  try {
    const a = new LoadHistory(kv, { clock });
    const b = new LoadHistory(kv, { clock });
    await Promise.all([a.record("tiny", 0, [2, 0]), b.record("tiny", 0, [4, 0])]);
    const [bucket] = await a.window("tiny", 0, T0);
    assert.equal(bucket?.samples, 2);
    assert.deepEqual(bucket?.tokensPerS, [3, 0]);
  } finally {
    kv.close();
  }
});

Deno.test("LoadHistory.recordPool() records every layer of a pool aggregate", async () => {
  await withHistory(async (history, _kv, clock) => {
    const before = fakeLoadReport({ at: T0 });
    const after = fakeLoadReport({ at: T0 + 1000, expertTokens: [[5, 0, 0, 0], [1, 1, 1, 1]] });
    const load = aggregatePoolLoad([{
      id: "127.0.0.1:9001",
      name: "backend-1",
      report: after,
      rates: reportRates(before, after),
      receivedAt: clock.now(),
      error: undefined,
    }], { now: clock.now(), staleAfterMs: 3000 });
    await history.recordPool(load);
    assert.deepEqual((await history.window("tiny", 0, T0))[0]?.tokensPerS, [5, 0, 0, 0]);
    assert.deepEqual(history.ewma("tiny", 1), [1, 1, 1, 1]);
  });
});

Deno.test("LoadHistory rejects bad options with a RangeError naming the option", async () => {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  try {
    assert.throws(() => new LoadHistory(kv, { clock, bucketMs: 0 }), /bucketMs must be > 0/);
    assert.throws(() => new LoadHistory(kv, { clock, alpha: 1.5 }), /alpha must be in \(0, 1\]/);
    assert.throws(() => new LoadHistory(kv, { clock, retentionMs: -1 }), /retentionMs/);
  } finally {
    kv.close();
  }
});
