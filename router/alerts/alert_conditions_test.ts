import assert from "node:assert/strict";
import type { BackendView } from "../pool/backend_view.ts";
import { oneSecondSample, poolLoadOf } from "../testing/pool_loads.ts";
import { backendView } from "../testing/views.ts";
import { observeConditions } from "./alert_conditions.ts";
import type { AlertSettings } from "./alert_settings.ts";

const SETTINGS: AlertSettings = {
  expertLoadThreshold: 0.8,
  balanceThreshold: 0.75,
  raiseAfter: 3,
  clearAfter: 5,
};
const sample = oneSecondSample;
const poolLoad = poolLoadOf;

function views(...ids: string[]): BackendView[] {
  return ids.map((id) => ({ ...backendView(id), name: `backend-${id.slice(-1)}` }));
}

Deno.test("observeConditions(): an expert over its share of executor capacity is hot", () => {
  // fakeLoadReport books 0.1 ms per token: 17 000 tokens → 1700 ms/s of 2 × 1000 ms/s.
  const load = poolLoad(sample("h:1", [[17_000, 100, 100, 100], [100, 100, 100, 100]]));
  const hot = observeConditions(load, views("h:1"), SETTINGS).filter((c) =>
    c.kind === "expert_hot"
  );
  assert.equal(hot.length, 1);
  assert.equal(hot[0]!.id, "expert_hot:backend-1:L0/E0");
  assert.equal(hot[0]!.subject, "backend-1 L0/E0");
  assert.equal(hot[0]!.value, 0.85);
  assert.equal(hot[0]!.threshold, 0.8);
  assert.match(hot[0]!.message, /L0\/E0 uses 85% of backend-1's executor capacity \(2 slots\)/);
  // The same expert on one slot only would be over capacity; at 15 000 tokens on two, not hot.
  const cooler = poolLoad(sample("h:1", [[15_000, 100, 100, 100], [1, 1, 1, 1]]));
  assert.equal(
    observeConditions(cooler, views("h:1"), SETTINGS).some((c) => c.kind === "expert_hot"),
    false,
  );
});

Deno.test("observeConditions(): an idle or lightly used pool raises no balance alert", () => {
  const idle = poolLoad(sample("h:1", [[0, 0, 0, 0], [0, 0, 0, 0]]));
  assert.deepEqual(observeConditions(idle, views("h:1"), SETTINGS), []);
  // Very skewed but only 3 tokens/s over 4 experts (< 1 per expert): noise, no alert.
  const trickle = poolLoad(sample("h:1", [[3, 0, 0, 0], [0, 0, 0, 0]]));
  assert.equal(trickle.models[0]!.layers[0]!.balancedness, 0.25);
  assert.deepEqual(observeConditions(trickle, views("h:1"), SETTINGS), []);
});

Deno.test("observeConditions(): a busy, skewed layer is low on balance", () => {
  const load = poolLoad(
    sample("h:1", [[300, 20, 0, 0], [50, 50, 50, 50]]),
    sample("h:2", [[100, 20, 40, 0], [50, 50, 50, 50]]),
  );
  const low = observeConditions(load, views("h:1", "h:2"), SETTINGS);
  assert.deepEqual(low.map((c) => c.id), ["balance_low:tiny:L0"]);
  assert.equal(low[0]!.subject, "tiny L0");
  assert.ok(Math.abs(low[0]!.value - (400 + 40 + 40) / 4 / 400) < 1e-12);
  assert.match(low[0]!.message, /balancedness 0.3 \(below 0.75\) at 480 expert tokens\/s/);
});

Deno.test("observeConditions(): unhealthy or stale backends are down", () => {
  const load = poolLoad(
    sample("h:1", [[1, 1, 1, 1], [1, 1, 1, 1]]),
    sample("h:2", [[1, 1, 1, 1], [1, 1, 1, 1]], { stale: true }),
    sample("h:3", [[1, 1, 1, 1], [1, 1, 1, 1]]),
  );
  const pool = views("h:1", "h:2", "h:3");
  pool[2] = { ...pool[2]!, healthy: false, lastError: "connection refused" };
  const down = observeConditions(load, pool, SETTINGS);
  assert.deepEqual(down.map((c) => [c.kind, c.id, c.subject]), [
    ["backend_down", "backend_down:h:2", "backend-2"],
    ["backend_down", "backend_down:h:3", "backend-3"],
  ]);
  assert.match(down[0]!.message, /load report failing \(connection failed: refused\)/);
  assert.match(down[1]!.message, /unhealthy \(connection refused\)/);
  // A configured backend the collector has not polled yet counts as down too.
  const unseen = observeConditions(poolLoad(), views("h:9"), SETTINGS);
  assert.deepEqual(unseen.map((c) => c.id), ["backend_down:h:9"]);
});
