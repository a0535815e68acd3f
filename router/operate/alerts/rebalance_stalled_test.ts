import assert from "node:assert/strict";
import { RebalanceHealth } from "../../control/balancer/rebalance_health.ts";
import { poolLoadOf } from "../../../tests/_support/router/pool_loads.ts";
import { observeConditions } from "./alert_conditions.ts";
import { rebalanceStalled } from "./rebalance_stalled.ts";

function held(now: number) {
  const health = new RebalanceHealth({ adjustIntervalMs: 60_000 });
  health.evaluated(0, {
    due: true,
    reason: "staging_failed",
    detail: 'Cannot stage plan version 4: failed on "b2"',
    worst: 0.612,
    threshold: 0.93,
  });
  return { model: "m", health: health.snapshot(now) };
}

Deno.test("rebalanceStalled() fires after 3 × adjust_interval due without a switch, saying why", () => {
  assert.deepEqual(rebalanceStalled(held(180_000)), [], "exactly 3 intervals: not yet");
  const [condition] = rebalanceStalled(held(240_000));
  assert.equal(condition?.id, "rebalance_stalled:m");
  assert.equal(condition?.kind, "rebalance_stalled");
  assert.equal(condition?.value, 240);
  assert.equal(condition?.threshold, 180);
  assert.equal(
    condition?.message,
    "A rebalance of m has been due for 4.0 min (worst layer 0.612 < threshold 0.93) but is " +
      'not happening: staging failed (Cannot stage plan version 4: failed on "b2")',
  );
  const quiet = new RebalanceHealth({ adjustIntervalMs: 60_000 });
  assert.deepEqual(rebalanceStalled({ model: "m", health: quiet.snapshot(1e9) }), []);
  assert.deepEqual(rebalanceStalled(undefined), []);
});

Deno.test("observeConditions() includes a stalled rebalance", () => {
  const settings = {
    expertLoadThreshold: 0.8,
    balanceThreshold: 0.75,
    raiseAfter: 1,
    clearAfter: 1,
  };
  const conditions = observeConditions(poolLoadOf(), [], settings, undefined, held(240_000));
  assert.deepEqual(conditions.map((c) => c.kind), ["rebalance_stalled"]);
});
