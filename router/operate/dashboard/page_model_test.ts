import assert from "node:assert/strict";
import {
  alertRows,
  formatBytes,
  heatmapGrid,
  planView,
  poolHealth,
  problemText,
  replicaMatrix,
  resourceRows,
  shownColumns,
  timelineData,
  windowedLoad,
} from "./static/page_model.js";

const LOAD = {
  backends: [
    {
      id: "127.0.0.1:1",
      name: "backend-1",
      stale: false,
      utilisation: 0.5,
      rss_bytes: 3 * 1024 * 1024,
      cpu_cores: 1.25,
      net_rx_bytes_s: 2048,
      net_tx_bytes_s: null,
      accelerator: { utilisation: 0.42, memory_used_bytes: 1024, memory_total_bytes: null },
      power_w: null,
      cold_starts: 1234,
      cold_starts_per_min: 2.25,
      layers: [{ layer: 0, expert_tokens_s: [5, 0, 1] }],
    },
    { id: "127.0.0.1:2", name: "backend-2", stale: true, error: "refused", accelerator: null },
  ],
  models: [{
    model: "m",
    layers: [{ layer: 0, expert_tokens_s: [5, 0, 1] }, { layer: 1, expert_tokens_s: [2, 2, 9] }],
  }],
};

Deno.test("heatmapGrid() keeps every layer's row of the API's exact values", () => {
  const grid = heatmapGrid(LOAD, undefined);
  assert.deepEqual(grid.layers, [0, 1]);
  assert.equal(grid.experts, 3);
  assert.equal(grid.max, 9);
  assert.deepEqual(grid.rows, [[5, 0, 1], [2, 2, 9]]);
  assert.deepEqual(heatmapGrid({ models: [] }, "m").rows, []);
});

Deno.test("replicaMatrix() prefers per-backend rates, falls back to the plan's placement", () => {
  const rates = replicaMatrix(LOAD, null, "m", 0);
  assert.equal(rates.kind, "rates");
  assert.deepEqual(rates.backends, ["backend-1"]);
  assert.deepEqual(rates.data, [[0, 0, 5], [1, 0, 0], [2, 0, 1]]);
  const plan = { layers: [{ layer: 1, hosted: [{ backend: "b1", experts: [0, 2] }] }] };
  const hosted = replicaMatrix(LOAD, plan, "m", 1);
  assert.equal(hosted.kind, "hosted");
  assert.deepEqual(hosted.data, [[0, 0, 1], [2, 0, 1]]);
  assert.equal(replicaMatrix({ models: [] }, null, "m", 0).kind, "none");
});

Deno.test("timelineData() leaves columns without data empty", () => {
  const view = timelineData({
    columns: [
      { start: 10, samples: 1, expert_tokens_s: [1, 3] },
      { start: 20, samples: 0, expert_tokens_s: null },
    ],
  });
  assert.deepEqual(view.starts, [10, 20]);
  assert.deepEqual(view.data, [[0, 0, 1], [0, 1, 3]]);
  assert.equal(view.max, 3);
});

Deno.test("resourceRows() says n/a for every value the API gave as null, never a number", () => {
  const [fresh, stale] = resourceRows(LOAD);
  assert.equal(fresh!.utilisation, "50.0 %");
  assert.equal(fresh!.cpuCores, "1.25");
  assert.equal(fresh!.memory, "3.0 MiB");
  assert.equal(fresh!.netRx, "2.0 KiB/s");
  assert.equal(fresh!.netTx, "n/a");
  assert.equal(fresh!.acceleratorUtil, "42.0 %");
  assert.equal(fresh!.acceleratorMemory, "1.0 KiB / n/a");
  assert.equal(fresh!.power, "n/a");
  assert.equal(fresh!.coldStarts, "1,234");
  assert.equal(fresh!.coldStartsPerMin, "2.3");
  assert.equal(stale!.state, "stale (refused)");
  for (
    const key of [
      "utilisation",
      "cpuCores",
      "memory",
      "acceleratorUtil",
      "power",
      "slots",
      "coldStarts",
      "coldStartsPerMin",
    ]
  ) {
    assert.equal(stale![key as keyof typeof stale], "n/a", key);
  }
  assert.equal(formatBytes(512), "512 B");
});

Deno.test("alertRows() lists firing alerts first, a resolved one once, and null without a source", () => {
  const firing = {
    id: "a",
    kind: "expert_hot",
    subject: "backend-1 L0/E3",
    state: "firing",
    fired_at: 0,
    resolved_at: null,
    value: 0.91234,
    threshold: 0.8,
    message: "hot",
  };
  const resolved = { ...firing, id: "b", state: "resolved", resolved_at: 5000 };
  const rows = alertRows({ active: [firing], recent: [resolved, firing] });
  assert.deepEqual(rows!.map((r) => r.id), ["a", "b"]);
  assert.equal(rows![0]!.value, "0.912 vs 0.8");
  assert.equal(rows![0]!.resolved, "");
  assert.equal(alertRows(null), null);
});

Deno.test("planView() counts replicas per expert and experts per backend of one layer", () => {
  const plan = {
    version: 4,
    model: "m",
    strategy: "dynamic",
    reason: "rebalance",
    created_at: null,
    balancedness: 0.9512,
    threshold: 0.8,
    pinned: null,
    slots_per_backend: 3,
    moves: {
      from_version: 3,
      moved: 2,
      backends: [{ backend: "b1", hosted: 5, moved: 2 }, { backend: "b2", hosted: 4, moved: 0 }],
    },
    layers: [{
      layer: 0,
      hosted: [{ backend: "b1", experts: [0, 1, 2] }, { backend: "b2", experts: [2, 3] }],
    }],
  };
  const load = {
    pool: {
      balancedness: 0.9,
      worst_layer: { model: "m", layer: 1, balancedness: 0.7 },
    },
    backends: [
      {
        name: "b1",
        residency: { budget_bytes: null, used_bytes: 2 * 2 ** 20, expert_bytes: 2 ** 20 },
      },
      { name: "b2", residency: null },
    ],
  };
  const view = planView(plan, 0, load)!;
  assert.deepEqual(view.replicasPerExpert, [1, 1, 2, 1]);
  assert.deepEqual(view.perBackend.map((b: { experts: number }) => b.experts), [3, 2]);
  // The summary over all layers: hosted, bytes (hosted × expert bytes), warm, moves.
  assert.deepEqual(
    view.perBackend.map((b: Record<string, unknown>) => [b.hosted, b.bytes, b.resident, b.moved]),
    [["5", "5.0 MiB", "2.0 MiB / unlimited", "2"], ["4", "n/a", "n/a", "0"]],
  );
  const facts = new Map(view.facts as [string, string][]);
  assert.equal(facts.get("moves since last plan"), "2 replicas loaded since v3");
  assert.equal(facts.get("balancedness now"), "0.9 (worst L1 0.7)");
  assert.deepEqual(view.facts![0], ["version", "4"]);
  assert.ok(view.facts!.some(([name, value]: string[]) => name === "created" && value === "n/a"));
  assert.equal(planView(null, 0), null);
  assert.deepEqual(planView({ error: "boom" }, 0), { error: "boom" });
});

Deno.test("poolHealth() lists every backend that is not fresh, with its report's age", () => {
  const health = poolHealth({
    backends: [
      { name: "backend-1", state: "fresh", report_age_ms: 400 },
      { name: "backend-2", state: "stale", report_age_ms: 12_300 },
      { name: "backend-3", stale: true, state: "down", report_age_ms: null },
    ],
  });
  assert.equal(health.fresh, 1);
  assert.equal(health.total, 3);
  assert.equal(
    problemText(health.problems),
    "backend-2 stale (report 12 s old), backend-3 down",
  );
  assert.deepEqual(poolHealth({ backends: [] }), { fresh: 0, total: 0, problems: [] });
});

Deno.test("shownColumns() drops columns every row has as n/a; resource rows carry state and age", () => {
  const rows = resourceRows({
    backends: [
      { id: "a", name: "backend-1", state: "fresh", report_age_ms: 400, queue_depth: 3 },
      { id: "b", name: "backend-2", state: "stale", report_age_ms: 9000, error: "timed out" },
    ],
  });
  assert.equal(rows[0]!.reportAge, "0.4 s");
  assert.equal(rows[1]!.state, "stale (timed out)");
  assert.equal(rows[1]!.stateKind, "stale");
  const columns = [["queueDepth", "queue"], ["power", "power"]];
  const keys = shownColumns(columns, rows).map(([k]: string[]) => k);
  assert.deepEqual(keys, ["queueDepth"]);
});

Deno.test("windowedLoad() shows the window's expert load and spread, the latest round's backends", () => {
  const load = { at: 5, backends: [{ id: "a" }], pool: { backends_reporting: 1, balancedness: 1 } };
  const window = {
    window_ms: 10_000,
    rounds: 9,
    pool: { balancedness: 0.5, worst_layer: null },
    models: [{ model: "m", layers: [{ layer: 0, expert_tokens_s: [1, 3], balancedness: 0.5 }] }],
  };
  const view = windowedLoad(load, window);
  assert.equal(view.pool.balancedness, 0.5);
  assert.equal(view.pool.backends_reporting, 1);
  assert.deepEqual(heatmapGrid(view, "m").rows, [[1, 3]]);
  assert.equal(windowedLoad(load, null), load);
});
