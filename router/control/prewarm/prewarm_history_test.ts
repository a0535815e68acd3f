/** @module Pre-warm history in shared state: a new leader's job shows it and knows the last run. */
import assert from "node:assert/strict";
import {
  flatForecast,
  poolLoad,
  prewarmFixture,
} from "../../../tests/_support/router/prewarm_fixture.ts";
import { KvPrewarmHistory, missedCronRun } from "./prewarm_history.ts";
import { PrewarmJob } from "./prewarm_job.ts";

const IDS = ["127.0.0.1:9001", "127.0.0.1:9002"];
const MIN = 60_000;

Deno.test("missedCronRun(): a minute boundary after the last run and by now", () => {
  const t = 1_700_000_040_000; // on a minute
  assert.equal(missedCronRun(t, t + 59_999), false);
  assert.equal(missedCronRun(t + 30_000, t + MIN + 9_000), true);
  assert.equal(missedCronRun(t - 1, t), true);
  assert.equal(missedCronRun(null, t + 10 * MIN), false);
});

Deno.test("PrewarmJob: a new leader's job resumes the shared decisions, newest first", async () => {
  await using p = await prewarmFixture();
  await using kv = await Deno.openKv(":memory:");
  const history = new KvPrewarmHistory(kv);
  const now = p.f.clock.now();
  p.load.current = poolLoad(now, IDS, 100, 0.5);
  p.traffic.forecast = flatForecast(now, 15 * MIN, 500);
  p.traffic.mix = { chat: 1 };
  const old = new PrewarmJob(p.deps, { history });
  await old.run(now);
  await old.run(now + MIN);
  // The old leader is gone; the new one starts empty and takes the history over.
  const next = new PrewarmJob(p.deps, { history, decisionsKept: 5 });
  assert.equal(next.lastRunAt(), null);
  await next.resume();
  assert.deepEqual(next.decisions().map((d) => d.at), [now + MIN, now]);
  assert.equal(next.lastRunAt(), now + MIN);
  assert.equal(missedCronRun(next.lastRunAt(), now + 2 * MIN + 5_000), true);
  await next.run(now + 2 * MIN + 5_000);
  assert.equal((await history.list(10)).length, 3);
});
