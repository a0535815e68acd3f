/** @module Balance statistics over time on crafted load vectors. */
import assert from "node:assert/strict";
import { balanceOverTime, balanceStats, meanStats } from "./balance_over_time.ts";

function close(actual: number | undefined, expected: number, what: string) {
  assert.ok(
    actual !== undefined && Math.abs(actual - expected) < 1e-9,
    `${what}: ${actual} != ${expected}`,
  );
}

Deno.test("balanceStats() of an even vector: CV 0, top share 1/n", () => {
  const stats = balanceStats([3, 3, 3, 3])!;
  close(stats.cv, 0, "cv");
  close(stats.top10Share, 0.25, "top10Share"); // ceil(0.4) = 1 expert of 4
});

Deno.test("balanceStats() of one hot expert of four: CV √3, top share 1", () => {
  const stats = balanceStats([8, 0, 0, 0])!;
  close(stats.cv, Math.sqrt(3), "cv"); // mean 2, deviations 6, −2, −2, −2 → σ = 2√3
  close(stats.top10Share, 1, "top10Share");
});

Deno.test("balanceStats() top 10 % of 20 experts is the hottest two", () => {
  const loads = Array.from({ length: 20 }, (_, i) => i === 0 ? 10 : i === 1 ? 5 : 1);
  close(balanceStats(loads)!.top10Share, 15 / 33, "top10Share");
});

Deno.test("balanceOverTime() gives null stats to idle buckets and means over loaded layers", () => {
  const buckets = [0, 60_000, 120_000];
  const loads = [
    [[2, 2], [], [4, 0]], // layer 0
    [[1, 3], [], [0, 0]], // layer 1
  ];
  const result = balanceOverTime(buckets, loads);
  assert.deepEqual(result.map((b) => b.at), buckets);
  assert.deepEqual(result.map((b) => b.tokens), [8, 0, 4]);
  assert.equal(result[1]!.mean, null);
  assert.equal(result[1]!.layers[0]!.stats, null);
  // Bucket 0: layer 0 even (top share 1/2), layer 1 [1, 3] (3/4) → mean 5/8.
  close(result[0]!.mean!.top10Share, (0.5 + 0.75) / 2, "bucket 0 top10Share");
  close(result[0]!.layers[1]!.stats!.cv, 0.5, "bucket 0 layer 1 cv");
  // Bucket 2: layer 1 idle, so the mean is layer 0 alone ([4, 0]: CV 1).
  close(result[2]!.mean!.cv, 1, "bucket 2 cv");
  assert.equal(result[2]!.layers[1]!.stats, null);
  assert.equal(meanStats([null, null]), null);
});
