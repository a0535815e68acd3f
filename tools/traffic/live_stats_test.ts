import assert from "node:assert/strict";
import { LiveStats, progressLine } from "./live_stats.ts";

Deno.test("LiveStats counts ok, shed (429/503) and errors, and windows latency and tokens/s", () => {
  let now = 0;
  const stats = new LiveStats({ now: () => now, windowS: 10 });
  const answer = (status: number | string, latencyMs: number, rows = 4) => {
    stats.sentOne();
    stats.record({ status, latencyMs, rows, requestType: "chat" });
  };
  answer(200, 100);
  now = 5_000;
  for (let i = 0; i < 9; i++) answer(200, 10 + i);
  answer(429, 1);
  answer(503, 1);
  answer(500, 1);
  answer("network", 1);
  const at5 = stats.snapshot();
  assert.deepEqual([at5.sent, at5.ok, at5.shed, at5.errors], [14, 10, 2, 2]);
  assert.equal(at5.p99, 100);
  assert.equal(at5.tokensPerS, (10 * 4) / 5, "over the 5 s elapsed so far");
  now = 12_000; // the first answer has left the 10 s window
  const at12 = stats.snapshot();
  assert.equal(at12.p99, 18);
  assert.equal(at12.p50, 14);
  assert.equal(at12.tokensPerS, (9 * 4) / 10);
  assert.equal(stats.latencies.length, 10, "the summary keeps every latency");
  assert.deepEqual(Object.fromEntries(stats.statuses), {
    200: 10,
    429: 1,
    503: 1,
    500: 1,
    network: 1,
  });
});

Deno.test("progressLine() shows sent, ok, shed, err, p50/p99 and tokens/s", () => {
  const line = progressLine(
    {
      elapsedS: 7.9,
      sent: 140,
      ok: 138,
      shed: 1,
      errors: 1,
      p50: 8.06,
      p99: 31.2,
      tokensPerS: 612.4,
    },
    60,
    "skewed",
  );
  assert.equal(
    line,
    "[ 7/60 s skewed] sent 140  ok 138  shed 1  err 1  p50 8.1 ms  p99 31.2 ms  612 tokens/s",
  );
  const empty = {
    elapsedS: 0,
    sent: 0,
    ok: 0,
    shed: 0,
    errors: 0,
    p50: NaN,
    p99: NaN,
    tokensPerS: 0,
  };
  assert.match(progressLine(empty, 60, "steady"), /p50 – {2}p99 –/);
});
