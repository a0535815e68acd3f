/** @module Expert-load series from counters: cursors, spreading, takeover without holes. */
import assert from "node:assert/strict";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { fakeLoadReport } from "../../../tests/_support/router/load_reports.ts";
import { KvLeaseStore } from "../leader/lease_store.ts";
import { spreadOverBuckets, tokensSince } from "./expert_cursor.ts";
import { ExpertLoadRecorder } from "./expert_load_recorder.ts";
import { parseSeriesKey } from "./series_key.ts";
import { TrafficStore } from "./traffic_store.ts";

const T0 = 1_700_000_040_000; // a bucket boundary of 10 s buckets
const BUCKET = 10_000;

/** backend-1 has counted `n` tokens on L0/E1 and 2n on L1/E3 by `at`. */
const report = (at: number, n: number, uptimeMs?: number) =>
  fakeLoadReport({
    at,
    tokens: 3 * n,
    requests: n,
    busyMs: n,
    ...(uptimeMs !== undefined ? { uptimeMs } : {}),
    expertTokens: [[0, n, 0, 0], [0, 0, 0, 2 * n]],
  });

Deno.test("tokensSince(): growth of one run, everything of a restarted run, nothing without a cursor", () => {
  const first = tokensSince(undefined, report(T0, 10));
  assert.deepEqual(first.adds, []);
  const grown = tokensSince(first.next, report(T0 + 1000, 25));
  assert.deepEqual(grown.adds.map((a) => [a.layer, a.tokens, a.from, a.to]), [
    [0, [0, 15], T0, T0 + 1000],
    [1, [0, 0, 0, 30], T0, T0 + 1000],
  ]);
  // Restarted 500 ms before this report: only what it counted since it started.
  const restarted = tokensSince(grown.next, report(T0 + 3000, 4, 500));
  assert.deepEqual(restarted.adds[0]!.tokens, [0, 4]);
  assert.equal(restarted.adds[0]!.from, T0 + 2500);
});

Deno.test("spreadOverBuckets() splits by overlap and keeps the total", () => {
  const parts = spreadOverBuckets(
    { layer: 0, tokens: [30], from: T0 + 5000, to: T0 + 20_000 },
    BUCKET,
  );
  assert.deepEqual(parts, [
    { start: T0, layer: 0, tokens: [10] },
    { start: T0 + BUCKET, layer: 0, tokens: [20] },
  ]);
});

Deno.test("ExpertLoadRecorder: a new leader adds what the backends counted while nobody led, once", async () => {
  await using kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const store = new TrafficStore(kv, { clock, bucketMs: BUCKET, retentionMs: 60 * BUCKET });
  const lease = new KvLeaseStore(kv);
  await lease.compareAndSet(await lease.read(), {
    holder: "a",
    term: 1,
    expiresAt: T0 + 5000,
    since: T0,
  });
  // Router a leads while its lease read matches; b takes over later.
  const fenceOf = (holder: string) => async () => {
    const read = await lease.read();
    return read.lease?.holder === holder ? lease.check(read) : null;
  };
  const recorder = (holder: string) =>
    new ExpertLoadRecorder({
      kv,
      store,
      clock,
      logger: new MemoryLogger(),
      fence: fenceOf(holder),
    });
  const a = recorder("a");
  await a.resume();
  a.record([report(T0 + 1000, 0)]);
  a.record([report(T0 + 2000, 100)]);
  await a.flush();
  a.record([report(T0 + 3000, 150)]); // recorded, never committed: a dies here
  // Nobody leads from 3 s to 9 s; b takes the lease and resumes from the cursors.
  await lease.compareAndSet(await lease.read(), {
    holder: "b",
    term: 2,
    expiresAt: T0 + 20_000,
    since: T0 + 9000,
  });
  await a.flush(); // a late write of the old leader is fenced off
  assert.equal(a.active, false);
  const b = recorder("b");
  await b.resume();
  b.record([report(T0 + 9000, 400)]);
  b.record([report(T0 + 12_000, 500)]);
  await b.close();
  const e1 = await store.values(parseSeriesKey("expert:tiny:L0:E1"), T0, T0 + 2 * BUCKET);
  const e3 = await store.values(parseSeriesKey("expert:tiny:L1:E3"), T0, T0 + 2 * BUCKET);
  assert.equal(Math.round(e1[0]! + e1[1]!), 500);
  assert.equal(Math.round(e3[0]! + e3[1]!), 1000);
  // 0 → 100 by 2 s and 100 → 400 by 9 s sit in the first bucket; 9 s → 12 s is split 1 : 2.
  assert.equal(Math.round(e1[0]!), 100 + 300 + Math.round(100 / 3));
});

Deno.test("tokensSince(): a part whose counter started again counts everything it counted since", () => {
  const before = tokensSince(undefined, report(T0, 100)).next;
  const rebuilt = fakeLoadReport({
    at: T0 + 1000,
    tokens: 400,
    requests: 150,
    busyMs: 150,
    expertTokens: [[0, 30, 0, 0], [0, 0, 0, 250]],
  });
  const { adds } = tokensSince(before, rebuilt);
  assert.deepEqual(adds.map((a) => a.tokens), [[0, 30], [0, 0, 0, 50]]);
});
