/**
 * The forecaster after bursts (issue 28, item 5): a live check read pre-warm predictions of
 * 94.5, 126.7 and 179.2 tokens/s after a few minutes of mixed bursts followed by 4 minutes
 * of steady 40 tokens/s. Reproduced through the real KV traffic store and the job's traffic
 * source: Holt won the backtest on a single origin during the bursts and extrapolated their
 * trend (this history: 169, 168, 152, 150 tokens/s before the fix).
 */
import assert from "node:assert/strict";
import { emptyModelBucket } from "../traffic/bucket_traffic.ts";
import { TrafficStore } from "../traffic/traffic_store.ts";
import { storeTrafficSource } from "./prewarm_sources.ts";

const MIN = 60_000;
const T0 = 1_700_000_000_000 - (1_700_000_000_000 % MIN);
/** Tokens per 1-minute bucket: ~15 tokens/s, then mixed bursts (seeded, see the module doc). */
const HISTORY = [
  912,
  1149,
  1019,
  1052,
  1014,
  913,
  691,
  629,
  736,
  772,
  1198,
  1026,
  1003,
  817,
  754,
  663,
  15077,
  762,
  5546,
  16558,
  6381,
  1499,
  738,
  14221,
];

Deno.test("forecastVolume() after mixed bursts and 4 steady minutes at 40 tokens/s predicts ~40, not the bursts' trend", async () => {
  await using kv = await Deno.openKv(":memory:");
  const sim = { now: T0 };
  const store = new TrafficStore(kv, { clock: { now: () => sim.now }, bucketMs: MIN });
  const source = storeTrafficSource(store, { model: () => "m", partialBucket: false });
  let at = T0;
  const put = async (tokens: number) => {
    const bucket = emptyModelBucket();
    bucket.volume.tokens = tokens;
    bucket.volume.requests = tokens / 4;
    await store.write("m", at, bucket);
    at += MIN;
  };
  for (const tokens of HISTORY) await put(tokens);
  // The job's run at the end of the bursts selects a model (as the live router did).
  sim.now = at + 6_000;
  assert.ok(await source.forecastVolume(sim.now, 15 * MIN));
  const peaks: number[] = [];
  for (let minute = 0; minute < 4; minute++) {
    await put(40 * 60);
    sim.now = at + 6_000;
    const forecast = await source.forecastVolume(sim.now, 15 * MIN);
    peaks.push(Math.max(...forecast!.points.map((p) => p.tokensPerS)));
  }
  for (const peak of peaks) assert.ok(Math.abs(peak - 40) <= 10, `peaks ${peaks.join(", ")}`);
});
