/**
 * Three routers and two backends as real processes on one Deno KV file: register
 * discovery, the leader lease, a leader SIGKILLed under skewed load. Kept short for the
 * suite; `deno task bench:fleet` runs the same scenario for 5 minutes (docs/results/).
 */
import assert from "node:assert/strict";
import { runFleet } from "../tools/bench/fleet_run.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

Deno.test("3 routers, 2 backends, leader killed: one leader at a time, nothing lost or doubled", async () => {
  const modelDir = await makeTinyModel();
  const dir = await Deno.makeTempDir({ prefix: "switchyard-fleet-" });
  try {
    const result = await runFleet({
      modelDir,
      model: TINY.name,
      dModel: TINY.dModel,
      dir,
      durationMs: 16_000,
      killAtMs: 8_000,
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
    // Data plane: every request answered, and counted exactly once in the shared series.
    assert.equal(result.failed, 0, summary);
    assert.equal(result.ok, result.sent, summary);
    assert.equal(result.recorded, result.sent, summary);
    // Lease: the killed leader was replaced, and no term began before the last one expired.
    assert.equal(result.terms[0]?.holder, "router-1", summary);
    assert.ok(result.failoverMs !== null, summary);
    assert.ok(result.leasesDisjoint, summary);
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
