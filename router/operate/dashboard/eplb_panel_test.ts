import assert from "node:assert/strict";
import { eplbFacts } from "./static/eplb_panel.js";

const PLAN = {
  placement: {
    mode: "auto",
    choice: "full_replication",
    action: "keep",
    reason: "full replication: version 2 hosts every expert on every backend",
    inputs: {
      experts: 32,
      slots_per_backend: { expert_parallel: 20, full_replication: 32 },
      budgets: [
        {
          backend: "backend-1",
          budget_bytes: null,
          expert_bytes: 3145728,
          experts_per_layer: null,
        },
        {
          backend: "backend-2",
          budget_bytes: 104857600,
          expert_bytes: 1048576,
          experts_per_layer: 50,
        },
      ],
      remote_row_ms: { value: 0.2345, source: "measured", detail: "…" },
      expert_row_ms: { value: 0.04, source: "assumed", detail: "…" },
    },
    predicted: {
      current: {
        busiest_backend_ms_per_s: 12.5,
        balancedness: 1,
        remote_row_share: 0,
      },
      full_replication: { busiest_backend_ms_per_s: 12.5, balancedness: 1, remote_row_share: 0 },
      gain: 0.25,
    },
    move: null,
  },
  health: {
    rebalances: [
      { outcome: "switched", trigger: "balancer", count: 2 },
      { outcome: "stage_failed", trigger: "balancer", count: 1 },
    ],
    seconds_since_last_rebalance: 75,
    moved_experts: 64,
    moved_bytes: 201326592,
    switch_duration_s: { count: 2, sum: 1.5, last: 0.5 },
    due: {
      seconds: 200,
      reason: "pinned",
      detail: "pinned to version 1",
      stalled: true,
    },
  },
};

Deno.test("eplbFacts() shows the placement decision, its inputs and EPLB health", () => {
  const facts = Object.fromEntries(eplbFacts(PLAN).map(([, value, key]) => [key, value]));
  assert.equal(facts["choice"], "full replication (auto)");
  assert.equal(facts["slots"], "expert parallel 20, full 32");
  assert.equal(
    facts["budgets"],
    "backend-1: no budget → all/32 per layer; backend-2: 100.0 MiB → 50/32 per layer",
  );
  assert.equal(facts["remote-row"], "0.2345 ms (measured)");
  assert.equal(facts["expert-row"], "0.04 ms (assumed)");
  assert.equal(facts["gain"], "25.0 %");
  assert.equal(facts["move"], "n/a");
  assert.equal(facts["rebalances"], "2 switched, 1 failed");
  assert.equal(facts["since-last"], "75 s");
  assert.equal(facts["duration"], "last 500 ms, mean 750 ms");
  assert.equal(facts["moved"], "64 experts, 192.0 MiB");
  assert.equal(facts["due"], "STALLED 3.3 min, held: pinned (pinned to version 1)");
  assert.deepEqual(eplbFacts(null), []);
  assert.deepEqual(eplbFacts({ error: "x" }), []);
});
