/**
 * Three routers and two backends as real processes on one Deno KV file: register
 * discovery, the leader lease, and the leader SIGKILLed under skewed load — not drained
 * first, no client retries — one second before a minute boundary, so the pre-warm cron
 * of that minute falls in the leaderless window. Kept short for the suite (up to a minute
 * waiting for the boundary); `deno task bench:failover` measures the same from outside.
 */
import assert from "node:assert/strict";
import { runFleet } from "../tools/bench/fleet_run.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

const MINUTE = 60_000;
/** Load before the kill, at least. */
const WARM_MS = 8_000;
/** The kill, before the minute boundary. */
const BEFORE_BOUNDARY_MS = 1_000;

/** The first minute boundary at least `WARM_MS` + the lead after `start`. */
function boundaryAfter(start: number): number {
  return Math.ceil((start + WARM_MS + BEFORE_BOUNDARY_MS) / MINUTE) * MINUTE;
}

Deno.test("3 routers, 2 backends, leader killed under load: one leader at a time, the series hold what was answered, no cron minute skipped", async () => {
  const modelDir = await makeTinyModel();
  const dir = await Deno.makeTempDir({ prefix: "switchyard-fleet-" });
  try {
    const result = await runFleet({
      modelDir,
      model: TINY.name,
      dModel: TINY.dModel,
      dir,
      killAtMs: (start) => boundaryAfter(start) - BEFORE_BOUNDARY_MS - start,
      durationMs: (start) => boundaryAfter(start) + 8_000 - start,
      drainMs: 0,
      retries: false,
      concurrency: 3,
      leaderTtl: "3s",
      renewInterval: "1s",
      routerEnv: {
        SWITCHYARD_EXPERT_BALANCER__ADJUST_INTERVAL: "2s",
        SWITCHYARD_EXPERT_BALANCER__THRESHOLD: "0.95",
        SWITCHYARD_ALERTS__EXPERT_LOAD_THRESHOLD: "0.001",
        SWITCHYARD_ALERTS__RAISE_AFTER: "2",
        SWITCHYARD_ALERTS__CLEAR_AFTER: "3",
      },
    });
    const summary = JSON.stringify({ ...result, leaderLog: result.leaderLog.length }, null, 1);
    // Data plane: only requests the killed leader held failed (one per client at most).
    assert.ok(result.failed <= 3, summary);
    assert.deepEqual(Object.keys(result.failures).filter((k) => k !== "connection"), [], summary);
    assert.equal(result.ok + result.failed, result.sent, summary);
    // The shared series hold every answered request but what the killed leader had not
    // flushed (its answers in the last flush interval + a write's time), and none twice.
    assert.ok(result.recorded <= result.ok + result.failed, summary);
    assert.ok(result.recorded >= result.ok - result.killedAtRisk, summary);
    // Lease: the killed leader was replaced, and no term began before the last one expired.
    assert.equal(result.terms[0]?.holder, "router-1", summary);
    assert.ok(result.failoverMs !== null && result.takeoverAt !== null, summary);
    assert.ok(result.leasesDisjoint, summary);
    // Pre-warm: the minute that passed while nobody led ran on takeover.
    const boundary = Math.ceil(result.killAt / MINUTE) * MINUTE;
    assert.ok(boundary <= result.takeoverAt!, summary);
    assert.ok(
      result.prewarmRuns.some((at) => at >= boundary && at <= result.takeoverAt! + 10_000),
      `no pre-warm run for the minute ${new Date(boundary).toISOString()}: ${summary}`,
    );
    // Alerts: at least one transition, each notified once, every resolve after its fire.
    assert.ok(result.notifications.fired >= 1, summary);
    assert.equal(result.notifications.duplicates, 0, summary);
    assert.equal(result.notifications.unmatched, 0, summary);
    // Plans: every backend runs the current version; every router answers alike.
    assert.notEqual(result.plans.current, null, summary);
    assert.ok(result.plans.consistent, summary);
    assert.deepEqual(result.viewsAgree, { plan: true, alerts: true }, summary);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(modelDir, { recursive: true });
  }
});
