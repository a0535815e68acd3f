import assert from "node:assert/strict";
import type { BackendView } from "../../serve/pool/backend_view.ts";
import {
  oneSecondSample,
  poolLoadOf,
  SAMPLE_AT,
} from "../../../tests/_support/router/pool_loads.ts";
import { aggregatePoolLoad } from "../../control/load/pool_load.ts";
import { backendView } from "../../../tests/_support/router/views.ts";
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

Deno.test("observeConditions(): an expert over the pool's capacity for it is hot", () => {
  // 0.1 ms per token on 2 slots: 17 700 tokens → saturation 0.885. Layer 0 runs 17 300
  // tokens/s there, capacity 17 300 ÷ 0.885; E0's one replica runs 17 000 of it with the
  // backend's headroom (1 − 0.885) · 17 300 ÷ 0.885 left: 88 % of its capacity.
  const load = poolLoad(sample("h:1", [[17_000, 100, 100, 100], [100, 100, 100, 100]]));
  const hot = observeConditions(load, views("h:1"), SETTINGS).filter((c) =>
    c.kind === "expert_hot"
  );
  assert.equal(hot.length, 1);
  assert.equal(hot[0]!.id, "expert_hot:tiny:L0/E0");
  assert.equal(hot[0]!.subject, "tiny L0/E0");
  const capacity = 17_000 + (1 - 0.885) * 17_300 / 0.885;
  assert.ok(Math.abs(hot[0]!.value - 17_000 / capacity) < 1e-9);
  assert.equal(hot[0]!.threshold, 0.8);
  assert.match(
    hot[0]!.message,
    /L0\/E0 of tiny carries 17000 tokens\/s, 88\.3% of the pool's capacity for it \(1 replica: 19248 tokens\/s with their backends' headroom\)/,
  );
});

Deno.test("observeConditions(): the same skew on a lightly loaded pool is not hot", () => {
  // The opposite case: skewed but far from capacity (saturation 0.11).
  const load = poolLoad(sample("h:1", [[1_500, 100, 100, 100], [100, 100, 100, 100]]));
  assert.equal(load.backends[0]!.saturation!.value, 0.11);
  const kinds = observeConditions(load, views("h:1"), SETTINGS).map((c) => c.kind);
  assert.equal(kinds.includes("expert_hot"), false);
});

Deno.test("observeConditions(): a skewed pool at half load is not hot (headroom left)", () => {
  // The bench's steady pool: one expert at 6× its share, backend at saturation 0.5.
  const load = poolLoad(sample("h:1", [[3_000, 500, 500, 500], [0, 0, 0, 0]], { busyMs: 1000 }));
  assert.equal(load.backends[0]!.saturation!.value, 0.5);
  const kinds = observeConditions(load, views("h:1"), SETTINGS).map((c) => c.kind);
  assert.equal(kinds.includes("expert_hot"), false);
});

Deno.test("observeConditions(): a second replica halves an expert's heat", () => {
  // E0 served on both backends: its capacity is two shares.
  const one = poolLoad(
    sample("h:1", [[6_000, 1_000, 1_000, 1_000], [1, 1, 1, 1]]),
    sample("h:2", [[0, 1_000, 1_000, 1_000], [1, 1, 1, 1]]),
  );
  const two = poolLoad(
    sample("h:1", [[3_000, 1_000, 1_000, 1_000], [1, 1, 1, 1]]),
    sample("h:2", [[3_000, 1_000, 1_000, 1_000], [1, 1, 1, 1]]),
  );
  const heat = (load: ReturnType<typeof poolLoad>) =>
    observeConditions(load, views("h:1", "h:2"), { ...SETTINGS, expertLoadThreshold: 0.01 })
      .find((c) => c.id === "expert_hot:tiny:L0/E0")?.value ?? 0;
  assert.ok(heat(one) > 1.5 * heat(two), `${heat(one)} vs ${heat(two)}`);
});

Deno.test("observeConditions(): a balanced, saturated pool raises saturation, not hot experts", () => {
  const busy = { busyMs: 1_900 };
  const load = poolLoad(
    sample("h:1", [[4_000, 4_000, 4_000, 4_000], [1, 1, 1, 1]], busy),
    sample("h:2", [[4_000, 4_000, 4_000, 4_000], [1, 1, 1, 1]], busy),
  );
  const kinds = observeConditions(load, views("h:1", "h:2"), {
    ...SETTINGS,
    saturation: 0.9,
  }).map((c) => c.kind);
  assert.deepEqual(kinds, ["saturation"]);
});

Deno.test("observeConditions(): latency SLO, shedding and saturation fire in overload", () => {
  const settings = { ...SETTINGS, latencyP99Ms: 1000, shedRatio: 0.01, saturation: 0.9 };
  // The overload: executor 3–9 % busy, host saturated, queues deep, 503s.
  const overloaded = poolLoad(
    sample("h:1", [[200, 200, 200, 200], [200, 200, 200, 200]], {
      requests: 50,
      rejected: 20,
      host: { loopLagMs: 400, queueWaitMs: 900, serviceMs: 5 },
    }),
  );
  const conditions = observeConditions(overloaded, views("h:1"), settings, {
    p99Ms: 5_200,
    count: 300,
  });
  const byKind = new Map(conditions.map((c) => [c.kind, c]));
  assert.deepEqual([...byKind.keys()].sort(), ["latency_slo", "saturation", "shedding"]);
  assert.match(byKind.get("latency_slo")!.message, /p99 is 5200 ms .* above the 1000 ms/);
  assert.ok(Math.abs(byKind.get("shedding")!.value - 20 / 70) < 1e-12);
  assert.ok(byKind.get("saturation")!.value >= 0.9);
  assert.match(byKind.get("saturation")!.message, /backend-1 \d\.\d\d \(queue\)/);
});

Deno.test("observeConditions(): a router shedding 429s is shedding and saturated", () => {
  const settings = { ...SETTINGS, shedRatio: 0.01, saturation: 0.9 };
  const base = sample("h:1", [[200, 200, 200, 200], [200, 200, 200, 200]], {
    requests: 100,
    busyMs: 1000,
  });
  const load = aggregatePoolLoad([base], {
    now: SAMPLE_AT,
    staleAfterMs: 3000,
    router: { shedPerS: 50, admittedPerS: 100 },
  });
  assert.ok(load.pool.saturation! >= 0.9);
  assert.equal(load.pool.scale!.direction, "up");
  const kinds = observeConditions(load, views("h:1"), settings).map((c) => c.kind);
  assert.deepEqual(kinds, ["shedding", "saturation"]);
});

Deno.test("observeConditions(): a healthy pool stays silent on every rule", () => {
  const settings = { ...SETTINGS, latencyP99Ms: 1000, shedRatio: 0.01, saturation: 0.9 };
  const healthy = poolLoad(
    sample("h:1", [[400, 350, 300, 380], [300, 320, 340, 360]], {
      requests: 50,
      host: { loopLagMs: 30, queueWaitMs: 0.2, serviceMs: 4 },
    }),
    sample("h:2", [[390, 360, 310, 370], [310, 330, 330, 350]], {
      requests: 50,
      host: { loopLagMs: 25, queueWaitMs: 0.1, serviceMs: 4 },
    }),
  );
  assert.deepEqual(
    observeConditions(healthy, views("h:1", "h:2"), settings, { p99Ms: 80, count: 500 }),
    [],
  );
  // Too few requests for a p99: no latency alert either way.
  assert.deepEqual(
    observeConditions(healthy, views("h:1", "h:2"), settings, { p99Ms: 9_000, count: 19 }),
    [],
  );
});

Deno.test("observeConditions(): an idle or lightly used pool raises no balance alert", () => {
  const idle = poolLoad(sample("h:1", [[0, 0, 0, 0], [0, 0, 0, 0]]));
  assert.deepEqual(observeConditions(idle, views("h:1"), SETTINGS), []);
  // All on one of two backends but only 3 tokens/s over 4 experts (< 1 per expert):
  // noise, no alert.
  const trickle = poolLoad(
    sample("h:1", [[3, 0, 0, 0], [0, 0, 0, 0]]),
    sample("h:2", [[0, 0, 0, 0], [0, 0, 0, 0]]),
  );
  assert.equal(trickle.models[0]!.layers[0]!.balancedness, 0.5);
  assert.deepEqual(observeConditions(trickle, views("h:1", "h:2"), SETTINGS), []);
});

Deno.test("observeConditions(): a layer whose work sits on one backend is low on balance", () => {
  // Layer 0: 320 expert tokens/s on backend-1, 100 on backend-2 → 210 / 320; layer 1 even.
  const load = poolLoad(
    sample("h:1", [[300, 20, 0, 0], [50, 50, 50, 50]]),
    sample("h:2", [[50, 20, 30, 0], [50, 50, 50, 50]]),
  );
  const low = observeConditions(load, views("h:1", "h:2"), SETTINGS);
  assert.deepEqual(low.map((c) => c.id), ["balance_low:tiny:L0"]);
  assert.equal(low[0]!.subject, "tiny L0");
  assert.ok(Math.abs(low[0]!.value - 210 / 320) < 1e-12);
  // The alert's value is the load aggregate's layer balancedness (one definition).
  assert.equal(low[0]!.value, load.models[0]!.layers[0]!.balancedness);
  assert.match(
    low[0]!.message,
    /Layer 0 of tiny has balancedness 0\.656 \(below 0\.75\): 320 \/ 100 expert tokens\/s on 2 backends/,
  );
  // Under full replication the shares follow entry routing, which placement cannot change.
  const health = {
    at: 0,
    outcomes: [],
    lastSwitchAt: null,
    moved: { experts: 0, bytes: 0 },
    durations: { count: 0, sumS: 0, lastS: null },
    due: null,
    adjustIntervalMs: 60_000,
    stallAfterMs: 180_000,
  };
  const replicated = observeConditions(load, views("h:1", "h:2"), SETTINGS, undefined, {
    model: "tiny",
    health,
    fullReplication: true,
  });
  assert.deepEqual(replicated.filter((c) => c.kind === "balance_low"), []);
  // The same skewed experts spread evenly over the backends: no alert (the traffic's skew).
  const spread = poolLoad(
    sample("h:1", [[150, 20, 15, 0], [50, 50, 50, 50]]),
    sample("h:2", [[150, 20, 15, 0], [50, 50, 50, 50]]),
  );
  assert.deepEqual(observeConditions(spread, views("h:1", "h:2"), SETTINGS), []);
  // …although its expert skew is high: the top expert carries 300 of 370 tokens/s.
  assert.ok(spread.models[0]!.layers[0]!.expertSkew.top10Share > 0.8);
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
