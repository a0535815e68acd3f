/**
 * Pre-warm forecasts on a manual clock with traffic recorded through the real
 * `TrafficRecorder` into a real (in-memory) KV traffic store, across bucket boundaries:
 * the job runs on the minute like its cron, the moment the last bucket closes.
 */
import assert from "node:assert/strict";
import { lastValue } from "../forecast/last_value.ts";
import type { InferenceEvent } from "../../serve/observe/inference_event.ts";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { OPEN_BUCKET_FLUSH_MS, TrafficRecorder } from "../traffic/traffic_recorder.ts";
import { TrafficStore } from "../traffic/traffic_store.ts";
import {
  poolLoad,
  prewarmFixture,
  SERVING,
} from "../../../tests/_support/router/prewarm_fixture.ts";
import { PrewarmJob } from "./prewarm_job.ts";
import { predictVolume } from "./predict_load.ts";
import { storeTrafficSource } from "./prewarm_sources.ts";

const MIN = 60_000;
const T0 = 1_700_000_040_000 - (1_700_000_040_000 % MIN);

function event(at: number, rows: number): InferenceEvent {
  return {
    requestId: "r",
    model: "m",
    requestType: "chat",
    rows,
    backend: "b",
    experts: undefined,
    batches: undefined,
    status: 200,
    ms: 1,
    at,
  };
}

/** One second of traffic: ten `rows`-row requests spread over it, then the clock moves on. */
async function recordSecond(recorder: TrafficRecorder, clock: ManualClock, rows: number) {
  for (let k = 0; k < 10; k++) recorder.observe(event(clock.now() + k * 100, rows));
  await clock.advance(1000);
}

/** Seeded rows per request in 1..7 (mean 4). */
function rowsOf(seed: { s: number }): number {
  seed.s = (seed.s * 1103515245 + 12345) % 2147483648;
  return 1 + (seed.s % 7);
}

Deno.test("forecastVolume() reads settled buckets only: on the minute it never predicts 0", async () => {
  await using kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const store = new TrafficStore(kv, { clock, bucketMs: MIN, retentionMs: 60 * MIN });
  // No timer: the test flushes each closed bucket itself, after the job's read — the
  // order the issue saw (the cron fired before the bucket that just closed was written).
  const recorder = new TrafficRecorder(store, {
    clock,
    logger: new MemoryLogger(),
    roundIntervalMs: 1000,
  });
  const raw = storeTrafficSource(store, {
    model: () => "m",
    forecasters: [lastValue],
    settleMs: 0,
  });
  // This recorder flushes only at boundaries (no open-bucket flush as the router does), so
  // no bucket in progress can be read: settled buckets only.
  const settled = storeTrafficSource(store, {
    model: () => "m",
    forecasters: [lastValue],
    partialBucket: false,
  });
  let rawZero = 0;
  for (let minute = 1; minute <= 5; minute++) {
    // 40 tokens/s: ten 4-row requests a second.
    for (let second = 0; second < 60; second++) await recordSecond(recorder, clock, 4);
    // The cron moment: the bucket that just closed is not in the store yet.
    const now = clock.now();
    assert.equal(now % MIN, 0);
    const before = await raw.forecastVolume(now, 15 * MIN);
    if (before !== null && before.points[0]!.tokensPerS === 0) rawZero++;
    const forecast = await settled.forecastVolume(now, 15 * MIN);
    if (minute >= 2) {
      assert.ok(forecast !== null, `minute ${minute}`);
      for (const point of forecast.points) assert.ok(Math.abs(point.tokensPerS - 40) < 1e-9);
    }
    await recorder.flushClosed();
  }
  assert.ok(rawZero >= 3, `reading the unsettled bucket predicted 0 in ${rawZero} of 5 runs`);
  await recorder.close();
});

Deno.test("PrewarmJob: predictions over a steady 12 minutes are non-zero and within ±30 % (MAPE)", async () => {
  await using kv = await Deno.openKv(":memory:");
  await using p = await prewarmFixture();
  const clock = new ManualClock(T0);
  const store = new TrafficStore(kv, { clock, bucketMs: MIN, retentionMs: 24 * 60 * MIN });
  // As the router runs it: closed buckets flushed at each boundary, the open one every 2 s.
  const recorder = new TrafficRecorder(store, {
    clock,
    logger: new MemoryLogger(),
    roundIntervalMs: 1000,
    flushEveryMs: 2000,
  });
  recorder.start();
  const traffic = storeTrafficSource(store, { model: () => "m" });
  const job = new PrewarmJob({ ...p.deps, traffic }, { clock });
  const seed = { s: 7 };
  for (let minute = 1; minute <= 12; minute++) {
    for (let second = 0; second < 60; second++) {
      for (let k = 0; k < 10; k++) recorder.observe(event(clock.now() + k * 100, rowsOf(seed)));
      await clock.advance(1000);
    }
    // On the minute, like the cron (the recorder's boundary flush runs in the same tick).
    await job.run(clock.now());
  }
  await clock.advance(10_000);
  await job.run(clock.now());
  const decisions = job.decisions().reverse();
  const predicted = decisions.filter((d) => d.predicted !== null);
  assert.ok(predicted.length >= 10, `${predicted.length} predictions`);
  for (const d of predicted) assert.ok(d.predicted!.tokensPerS > 0, JSON.stringify(d.predicted));
  const accuracy = job.accuracy();
  assert.ok(accuracy.checked >= 8, `${accuracy.checked} checked`);
  assert.ok(accuracy.mape! <= 0.3, `MAPE ${accuracy.mape}`);
  for (const d of predicted) {
    if (d.check?.observedTokensPerS === undefined || d.check.observedTokensPerS === null) continue;
    assert.ok(d.check.observedTokensPerS > 30 && d.check.observedTokensPerS < 50);
    assert.ok(d.check.predictedTokensPerS > 0);
  }
  await job.stop();
  await recorder.close();
});

Deno.test("PrewarmJob runs at an event's lead-window start, not at the next minute", async () => {
  await using p = await prewarmFixture();
  const clock = new ManualClock(T0);
  const job = new PrewarmJob(p.deps, { clock });
  // Lead window (1 h configured: no cold start measured yet) starts 25 s after this run.
  const start = T0 + 25_000 + 3_600_000;
  p.events.list = [{ name: "launch", start, end: start + 600_000, multiplier: 10 }];
  p.load.current = poolLoad(T0, SERVING, 100, 0.5); // 200 tokens/s per backend: 400 needs 3
  p.traffic.forecast = {
    model: "last_value",
    points: [{ at: T0 + MIN, tokensPerS: 40 }],
  };
  await job.run(clock.now());
  assert.equal(job.decisions()[0]!.trigger, "none");
  await clock.advance(25_000);
  await clock.settle();
  const [latest] = job.decisions();
  assert.equal(latest!.at, T0 + 25_000);
  assert.equal(latest!.trigger, "event_lead");
  await job.stop();
});

Deno.test("forecastVolume() blends the bucket in progress: a step shows on the minute, not a bucket later", async () => {
  await using kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const store = new TrafficStore(kv, { clock, bucketMs: MIN, retentionMs: 60 * MIN });
  // As the router runs it: closed buckets flushed at each boundary, the open one every second.
  const recorder = new TrafficRecorder(store, {
    clock,
    logger: new MemoryLogger(),
    roundIntervalMs: 1000,
    flushEveryMs: OPEN_BUCKET_FLUSH_MS,
  });
  recorder.start();
  const settledOnly = storeTrafficSource(store, {
    model: () => "m",
    forecasters: [lastValue],
    partialBucket: false,
  });
  const blended = storeTrafficSource(store, { model: () => "m", forecasters: [lastValue] });
  // Minutes 1-3 at 40 tokens/s (ten 4-row requests a second), minute 4 at 80 (eight rows).
  const second = (rows: number) => recordSecond(recorder, clock, rows);
  for (let s = 0; s < 3 * 60; s++) await second(4);
  for (let s = 0; s < 30; s++) await second(8);
  // Mid-bucket (30 s into minute 4): the store surely holds its first 29 s at 80 tokens/s.
  const mid = clock.now();
  const old = await settledOnly.forecastVolume(mid, 3 * MIN);
  const now = await blended.forecastVolume(mid, 3 * MIN);
  // Settled only: the last closed bucket (40 tokens/s) for every point.
  assert.ok(old !== null && now !== null);
  for (const p of old.points) assert.equal(p.tokensPerS, 40);
  // Blended: minute 3 closed whole (40), then minute 4 in progress: partial P tokens over
  // fraction 29/60 plus (31/60) × the one-step forecast 2400 tokens. P is what the last
  // flush held: 80 tokens/s over the 29–30 s the flushes so far covered (the flush of this
  // tick may or may not have landed, and a flush holds the second it was observed in).
  const point = now.points.find((p) => p.at === T0 + 4 * MIN)!;
  const partialS = (60 * point.tokensPerS - (31 / 60) * 2400) / 80;
  assert.ok(
    [29, 30].some((s) => Math.abs(partialS - s) < 1e-9),
    `${point.tokensPerS} tokens/s means ${partialS} s of the bucket flushed, not 29–30`,
  );
  assert.ok(point.tokensPerS > 55, "the step shows in the bucket it happens in");
  // Later points follow the blended bucket (last value), not the closed one.
  assert.equal(now.points.at(-1)!.tokensPerS, point.tokensPerS);
  for (let s = 30; s < 60; s++) await second(8);
  // On the minute: minute 4 just closed; the settled-only forecast still says 40.
  const onMinute = clock.now();
  const lagging = await settledOnly.forecastVolume(onMinute, 3 * MIN);
  const fresh = await blended.forecastVolume(onMinute, 3 * MIN);
  assert.equal(lagging!.points.find((p) => p.at === onMinute + MIN)!.tokensPerS, 40);
  const next = fresh!.points.find((p) => p.at === onMinute + MIN)!.tokensPerS;
  assert.ok(Math.abs(next - 80) / 80 < 0.05, `blended forecast for the next minute: ${next}`);
  await recorder.close();
});

Deno.test("forecastVolume() divides a running event out of the history: the job's 5× is not counted twice", async () => {
  await using kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const store = new TrafficStore(kv, { clock, bucketMs: MIN, retentionMs: 60 * MIN });
  const recorder = new TrafficRecorder(store, {
    clock,
    logger: new MemoryLogger(),
    roundIntervalMs: 1000,
  });
  const source = storeTrafficSource(store, {
    model: () => "m",
    forecasters: [lastValue],
    partialBucket: false,
  });
  // 40 tokens/s for 4 minutes, then a 5× event (200 tokens/s) that runs for 3 minutes so far.
  const fiveX = {
    id: "e",
    name: "promotion",
    start: T0 + 4 * MIN,
    end: T0 + 30 * MIN,
    multiplier: 5,
  };
  for (let minute = 0; minute < 7; minute++) {
    const rows = minute < 4 ? 4 : 20;
    for (let second = 0; second < 60; second++) await recordSecond(recorder, clock, rows);
    await recorder.flushClosed();
  }
  await clock.advance(10_000);
  const now = clock.now();
  const asIs = await source.forecastVolume(now, 3 * MIN);
  const baseline = await source.forecastVolume(now, 3 * MIN, [fiveX]);
  for (const p of asIs!.points) assert.ok(Math.abs(p.tokensPerS - 200) < 1e-9, "history as it is");
  for (const p of baseline!.points) assert.ok(Math.abs(p.tokensPerS - 40) < 1e-9, "5× divided out");
  // The job multiplies the baseline by the event: 200, what is flowing, not 1,000.
  const predicted = predictVolume(baseline!.points, [fiveX], { now, defaultLeadMs: 10 * MIN });
  for (const p of predicted) assert.ok(Math.abs(p.tokensPerS - 200) < 1e-9);
  await recorder.close();
});
