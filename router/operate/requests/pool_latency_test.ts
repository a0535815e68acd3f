/** @module The latency SLO over every router: histograms shared through one KV. */
import assert from "node:assert/strict";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { histogramOf, histogramQuantile, mergeHistograms } from "./latency_histogram.ts";
import { PoolLatency } from "./pool_latency.ts";

Deno.test("latency histograms add up and keep a percentile within one bucket (10 %)", () => {
  const fast = Array.from({ length: 990 }, (_, i) => 5 + (i % 10));
  const slow = Array.from({ length: 10 }, () => 2000);
  const merged = mergeHistograms([histogramOf(fast), histogramOf(slow)]);
  const p99 = histogramQuantile(merged, 0.99)!;
  assert.ok(p99 >= 14 && p99 <= 14 * 1.1, `${p99}`);
  const p999 = histogramQuantile(merged, 0.999)!;
  assert.ok(p999 >= 2000 && p999 <= 2200, `${p999}`);
  assert.equal(histogramQuantile({}, 0.99), undefined);
});

Deno.test("PoolLatency: a follower's slow requests reach every router's SLO reading; a stopped router's age out", async () => {
  await using kv = await Deno.openKv(":memory:");
  const clock = new ManualClock();
  const router = (id: string, ms: number) =>
    new PoolLatency({
      kv,
      id,
      own: () => histogramOf(Array.from({ length: 50 }, () => ms)),
      clock,
      logger: new MemoryLogger(),
    });
  const leader = router("leader", 20);
  const follower = router("follower", 3000);
  // Before any shared reading: each judges its own requests.
  assert.ok(leader.reading(clock.now())!.p99Ms < 30);
  // One round each (what their timers do every second), the leader's read last.
  await follower.refresh();
  await leader.refresh();
  const seen = leader.reading(clock.now())!;
  assert.equal(seen.routers, 2);
  assert.equal(seen.count, 100);
  assert.ok(seen.p99Ms >= 3000, `${seen.p99Ms}`);
  // The follower stops: its window is withdrawn; the leader's reading goes back to one router.
  await follower.stop();
  await clock.advance(1500);
  await leader.refresh();
  assert.equal(leader.reading(clock.now())!.routers, 1);
  assert.ok(leader.reading(clock.now())!.p99Ms < 30);
  await leader.stop();
});
