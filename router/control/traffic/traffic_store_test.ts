/** @module Traffic recording and reading on in-memory and file KV with a manual clock. */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { InferenceEvent } from "../../serve/observe/inference_event.ts";
import type { PoolLoad } from "../load/pool_load.ts";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { affinityShares } from "./affinity.ts";
import { formatSeriesKey, parseSeriesKey } from "./series_key.ts";
import { TrafficRecorder } from "./traffic_recorder.ts";
import { TrafficStore } from "./traffic_store.ts";

const MIN = 60_000;
const T0 = 1_700_000_040_000; // a bucket boundary of 1-minute buckets

function event(at: number, rows: number, requestType?: string, experts?: [number, number][][]) {
  return {
    requestId: "r",
    model: "m",
    requestType,
    rows,
    backend: "b",
    experts: experts?.map((layer) => new Map(layer)),
    batches: undefined,
    status: 200,
    ms: 1,
    at,
  } satisfies InferenceEvent;
}

function round(at: number, layers: number[][]): PoolLoad {
  return {
    at,
    backends: [],
    models: [{
      model: "m",
      layers: layers.map((expertTokensPerS, layer) => ({
        layer,
        expertTokensPerS,
        balancedness: 1,
        expertSkew: { top10Share: 0, cv: 0 },
      })),
    }],
    pool: { reporting: 1, balancedness: 1, utilisationBalancedness: 1, utilisationCv: 0 },
  };
}

function setup(kv: Deno.Kv, clock: ManualClock, retentionMs = 60 * MIN) {
  const store = new TrafficStore(kv, { clock, bucketMs: MIN, retentionMs });
  const recorder = new TrafficRecorder(store, {
    clock,
    logger: new MemoryLogger(),
    roundIntervalMs: 1000,
  });
  return { store, recorder };
}

Deno.test("series keys round-trip through their string form", () => {
  for (
    const text of [
      "requests:demo-moe",
      "tokens:demo-moe:chat",
      "expert:demo-moe:L0:E3",
      "requests:a%3Ab:x",
    ]
  ) {
    assert.equal(formatSeriesKey(parseSeriesKey(text)), text);
  }
  assert.deepEqual(parseSeriesKey("expert:m:L1:E12"), {
    kind: "expert",
    model: "m",
    layer: 1,
    expert: 12,
  });
  assert.throws(() => parseSeriesKey("latency:m"), /kind must be/);
  assert.throws(() => parseSeriesKey("expert:m:L1"), /expert:<model>:L<layer>:E<expert>/);
  assert.throws(() => parseSeriesKey("requests:"), /model is empty/);
});

Deno.test("TrafficRecorder buckets requests, tokens, types and expert load, flushing closed buckets", async () => {
  await using kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const { store, recorder } = setup(kv, clock);
  recorder.start();
  recorder.observe(event(T0 + 1000, 4, "chat", [[[0, 3], [2, 5]]]));
  recorder.observe(event(T0 + 2000, 2, "code", [[[1, 4]]]));
  recorder.observe(event(T0 + 3000, 1));
  recorder.observe({ ...event(T0 + 3000, 1), rows: undefined }); // rejected before decoding
  recorder.recordRound(round(T0 + 1000, [[10, 0, 5]]));
  recorder.recordRound(round(T0 + 2000, [[10, 2, 5]]));
  recorder.observe(event(T0 + MIN + 5, 8, "chat", [[[2, 16]]]));
  // Nothing is in KV until the first bucket closes.
  assert.deepEqual(await store.values(parseSeriesKey("requests:m"), T0, T0 + MIN), [0]);
  await clock.advance(MIN);
  await recorder.flushClosed();
  assert.deepEqual(await store.values(parseSeriesKey("requests:m"), T0, T0 + 2 * MIN), [3, 0]);
  assert.deepEqual(await store.values(parseSeriesKey("tokens:m"), T0, T0 + MIN), [7]);
  assert.deepEqual(await store.values(parseSeriesKey("tokens:m:chat"), T0, T0 + MIN), [4]);
  assert.deepEqual(await store.values(parseSeriesKey("requests:m:untyped"), T0, T0 + MIN), [1]);
  assert.deepEqual(await store.values(parseSeriesKey("expert:m:L0:E2"), T0, T0 + MIN), [10]);
  assert.deepEqual(await store.values(parseSeriesKey("expert:m:L0:E1"), T0, T0 + MIN), [2]);
  await recorder.close(); // flushes the open bucket too
  assert.deepEqual(await store.series(parseSeriesKey("requests:m:chat"), T0, T0 + 3 * MIN), [
    { at: T0, value: 1 },
    { at: T0 + MIN, value: 1 },
    { at: T0 + 2 * MIN, value: 0 },
  ]);
  assert.deepEqual(
    (await store.listSeries("m")).map(formatSeriesKey),
    [
      "requests:m",
      "requests:m:chat",
      "requests:m:code",
      "requests:m:untyped",
      "tokens:m",
      "tokens:m:chat",
      "tokens:m:code",
      "tokens:m:untyped",
      "expert:m:L0:E0",
      "expert:m:L0:E1",
      "expert:m:L0:E2",
    ],
  );
  const mix = await store.requestTypeMix("m", T0, T0 + 2 * MIN);
  assert.deepEqual(mix, { chat: 0.5, code: 0.25, untyped: 0.25 });
  const affinity = await store.affinity("m", T0, T0 + 2 * MIN);
  assert.deepEqual(affinity, { chat: [[3, 0, 21]], code: [[0, 4]] });
  assert.deepEqual(affinityShares(affinity).chat, [[0.125, 0, 0.875]]);
});

Deno.test("TrafficStore adds to a bucket written twice (a restart in mid-bucket)", async () => {
  await using kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const first = setup(kv, clock);
  first.recorder.observe(event(T0, 2, "chat"));
  await first.recorder.close();
  const second = setup(kv, clock);
  second.recorder.observe(event(T0 + 10, 3, "chat"));
  await second.recorder.close();
  assert.deepEqual(await first.store.values(parseSeriesKey("tokens:m:chat"), T0, T0 + MIN), [5]);
  assert.deepEqual(await first.store.values(parseSeriesKey("requests:m"), T0, T0 + MIN), [2]);
});

Deno.test("TrafficStore hides and sweeps buckets past retention", async () => {
  await using kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const { store, recorder } = setup(kv, clock, 10 * MIN);
  for (let i = 0; i < 5; i++) recorder.observe(event(T0 + i * MIN, 1, "chat", [[[0, 2]]]));
  await recorder.close();
  const key = parseSeriesKey("requests:m");
  await clock.advance(12 * MIN); // now = T0 + 12 min: buckets before T0 + 2 min are gone
  assert.deepEqual(
    (await store.series(key, T0, T0 + 5 * MIN)).map((p) => [p.at - T0, p.value]),
    [[2 * MIN, 1], [3 * MIN, 1], [4 * MIN, 1]],
  );
  // Two old buckets, each a volume and an affinity entry.
  assert.equal(await store.sweep(), 2 * 2);
  assert.deepEqual(await store.affinity("m", T0, T0 + 5 * MIN), { chat: [[6]] });
  const left = [];
  for await (const entry of kv.list({ prefix: ["series", "volume", "m"] })) left.push(entry.key[3]);
  assert.deepEqual(left, [T0 + 2 * MIN, T0 + 3 * MIN, T0 + 4 * MIN]);
});

Deno.test("traffic series survive a restart (reopening the same KV file)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "state.kv");
    const clock = new ManualClock(T0);
    {
      using kv = await Deno.openKv(path);
      const { recorder } = setup(kv, clock);
      recorder.observe(event(T0 + 5, 6, "code", [[[1, 2]]]));
      await recorder.close();
    }
    using kv = await Deno.openKv(path);
    const { store } = setup(kv, clock);
    assert.deepEqual(await store.values(parseSeriesKey("tokens:m:code"), T0, T0 + MIN), [6]);
    assert.deepEqual(await store.affinity("m", T0), { code: [[0, 2]] });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("TrafficStore shards: several routers' requests in one bucket add up, nothing lost", async () => {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const logger = new MemoryLogger();
  const recorders = ["router-a", "router-b", "router-c"].map((shard) =>
    new TrafficRecorder(new TrafficStore(kv, { clock, shard }), {
      clock,
      logger,
      roundIntervalMs: 1000,
    })
  );
  // 7 requests through each router, in the same bucket, flushed at the same moment.
  recorders.forEach((recorder, r) => {
    for (let i = 0; i < 7; i++) recorder.observe(event(T0 + r * 10 + i, 2, "chat", [[[1, 2]]]));
  });
  await Promise.all(recorders.map((recorder) => recorder.close()));
  const store = new TrafficStore(kv, { clock });
  assert.deepEqual(await store.values({ kind: "requests", model: "m" }, T0, T0 + MIN), [21]);
  assert.deepEqual(await store.values({ kind: "tokens", model: "m" }, T0, T0 + MIN), [42]);
  assert.deepEqual(await store.requestTypeMix("m", T0, T0 + MIN), { chat: 1 });
  assert.deepEqual((await store.affinity("m", T0, T0 + MIN)).chat, [[0, 42]]);
  assert.equal(logger.find("traffic bucket lost").length, 0);
  kv.close();
});
