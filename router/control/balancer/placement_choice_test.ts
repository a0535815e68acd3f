/** @module The placement cost model and the choice between full replication and expert parallelism. */
import assert from "node:assert/strict";
import fc from "fast-check";
import { hostedExperts, type PlacementPlan, staticPlan } from "../../../shared/placement_plan.ts";
import type { PlacementCosts } from "../load/cost_window.ts";
import { assumedCosts } from "../load/cost_window.ts";
import { type BackendBudget, slotsWithin } from "./budget_slots.ts";
import { choosePlacement, MIN_PLACEMENT_GAIN } from "./placement_choice.ts";
import {
  fullReplicationFit,
  fullReplicationPlan,
  isFullReplication,
  planCost,
} from "./placement_cost.ts";
import { decideRebalance, type RebalanceInput } from "./rebalancer.ts";

const two = [
  { id: "b1", url: "http://127.0.0.1:9001" },
  { id: "b2", url: "http://127.0.0.1:9002" },
];
const model = { name: "m", layers: 1, experts: 4, groups: 1 };
const MIB = 1048576;
const unlimited = (ids: string[], expertBytes = MIB) =>
  new Map<string, BackendBudget>(ids.map((id) => [id, { budgetBytes: null, expertBytes }]));

/** Costs of a manual model: `remote` ms per remote row, `expert` ms per expert row. */
function costs(remote: number, expert = 1): PlacementCosts {
  const assumed = assumedCosts();
  return {
    remoteRow: { ...assumed.remoteRow, ms: remote, source: "measured", detail: "manual" },
    expertRow: { ...assumed.expertRow, ms: expert, source: "measured", detail: "manual" },
  };
}

function versioned(plan: Omit<PlacementPlan, "version" | "createdAt">, version = 3): PlacementPlan {
  return { ...plan, version, createdAt: 0 };
}

const blocks = versioned(
  staticPlan({ model: "m", layers: 1, experts: 4, backends: two, slotsPerBackend: 2 }),
);

Deno.test("planCost(): execution by replica share plus hops charged to the entry backend", () => {
  // Experts 0 and 1 (10 rows/s each) live on b1 only. Half their rows enter at b2 and cross.
  const cost = planCost(blocks, [[10, 10, 0, 0]], { expertRowMs: 1, remoteRowMs: 0.5 });
  assert.deepEqual(cost.workMs, [20, 5]);
  assert.deepEqual(cost.hopMs, [0, 5]);
  assert.equal(cost.bottleneckMs, 20);
  assert.equal(cost.balancedness, 12.5 / 20);
  assert.equal(cost.rowsPerS, 20);
  assert.equal(cost.remoteRowsPerS, 10);
  // Full replication: every row local, each backend half of the execution.
  const full = planCost(fullReplicationPlan(model, two, "x"), [[10, 10, 0, 0]], {
    expertRowMs: 1,
    remoteRowMs: 0.5,
  });
  assert.deepEqual(full.workMs, [10, 10]);
  assert.equal(full.remoteRowsPerS, 0);
  assert.equal(full.balancedness, 1);
});

Deno.test("fullReplicationPlan() hosts every expert on every backend within E slots", () => {
  const plan = fullReplicationPlan({ ...model, layers: 2 }, two, "full");
  assert.equal(plan.slotsPerBackend, 4);
  assert.ok(isFullReplication(plan, 4));
  assert.ok(!isFullReplication(blocks, 4));
  const hosted = hostedExperts(versioned(plan), "b2");
  assert.deepEqual(hosted, [[0, 1, 2, 3], [0, 1, 2, 3]]);
});

Deno.test("fullReplicationFit() names the budget that is too small, and budgets not reported", () => {
  const tight = new Map<string, BackendBudget>([
    ["b1", { budgetBytes: 8 * MIB, expertBytes: MIB }],
    ["b2", { budgetBytes: 3 * MIB, expertBytes: MIB }],
  ]);
  const fit = fullReplicationFit(model, two, tight);
  assert.equal(fit.fits, false);
  assert.match(!fit.fits ? fit.reason : "", /budget of b2 \(3\.0 MiB\) holds 3 of 4 experts/);
  const missing = fullReplicationFit(model, two, unlimited(["b1"]));
  assert.deepEqual(missing.fits ? [] : missing.unknown, ["b2"]);
  assert.deepEqual(fullReplicationFit(model, two, unlimited(["b1", "b2"])), { fits: true });
});

const base = {
  mode: "auto" as const,
  model,
  backends: two,
  budgets: unlimited(["b1", "b2"]),
  expertParallel: blocks,
  adjustIntervalMs: 60_000,
};
const even = [[10, 10, 10, 10]];

Deno.test("choosePlacement() chooses full replication when everything fits and hops are costly", () => {
  const first = choosePlacement({ ...base, current: null, loads: null, costs: costs(2) });
  assert.equal(first.choice, "full_replication");
  assert.equal(first.action, "switch");
  assert.equal(first.inputs.load, "even");
  const running = choosePlacement({ ...base, current: blocks, loads: even, costs: costs(2) });
  assert.equal(running.choice, "full_replication");
  assert.equal(running.action, "switch");
  // Blocks: 20 ms of rows each + 20 rows/s crossing × 2 ms; full: 20 ms each.
  assert.equal(running.expertParallel.bottleneckMs, 40);
  assert.equal(running.fullReplication!.bottleneckMs, 20);
  assert.equal(running.gain, 0.5);
  // b1 and b2 each load 2 experts of 1 MiB: 2.1 ms at 1 GB/s, paid back by 20 ms saved per s.
  assert.equal(running.move!.experts, 4);
  assert.equal(running.move!.bytes, 4 * MIB);
  assert.ok(running.move!.paybackS! < 1);
  assert.match(running.reason, /^full replication: every backend fits all 4 experts/);
  assert.match(running.reason, /busiest backend 40\.00 → 20\.00 ms\/s/);
});

Deno.test("choosePlacement() keeps expert parallelism when it does not fit, naming the budget", () => {
  const budgets = new Map<string, BackendBudget>([
    ["b1", { budgetBytes: 2 * MIB, expertBytes: MIB }],
    ["b2", { budgetBytes: 2 * MIB, expertBytes: MIB }],
  ]);
  const chosen = choosePlacement({
    ...base,
    budgets,
    current: blocks,
    loads: even,
    costs: costs(5),
  });
  assert.equal(chosen.choice, "expert_parallel");
  assert.equal(chosen.action, "keep");
  assert.match(chosen.reason, /does not fit: the memory budget of b1 \(2\.0 MiB\) holds 2 of 4/);
  assert.deepEqual(chosen.inputs.budgets[0], {
    backend: "b1",
    budgetBytes: 2 * MIB,
    expertBytes: MIB,
    slots: 2,
  });
  // Before any report, the first plan waits for the budgets.
  const first = choosePlacement({
    ...base,
    budgets: unlimited(["b1"]),
    current: null,
    loads: null,
    costs: costs(5),
  });
  assert.equal(first.action, "wait");
});

Deno.test("choosePlacement() keeps a balanced expert-parallel plan when hops are cheap", () => {
  const chosen = choosePlacement({ ...base, current: blocks, loads: even, costs: costs(0.01) });
  assert.equal(chosen.choice, "expert_parallel");
  assert.ok(chosen.gain! < MIN_PLACEMENT_GAIN, String(chosen.gain));
  assert.match(chosen.reason, /would gain 0\.5 % < 5\.0 %/);
});

Deno.test("choosePlacement() keeps expert parallelism when moving the weights would not pay back", () => {
  // 1 GiB experts: 2 GiB per backend at 1 GB/s ≈ 2.1 s of loading for 2 ms saved per s.
  const chosen = choosePlacement({
    ...base,
    budgets: unlimited(["b1", "b2"], 1024 * MIB),
    current: blocks,
    loads: [[0.1, 0.1, 0.1, 0.1]],
    costs: costs(2),
  });
  assert.equal(chosen.choice, "expert_parallel");
  assert.match(chosen.reason, /would pay back in \d+ s > adjust_interval 60 s/);
});

Deno.test("choosePlacement() follows expert_balancer.placement and keeps full replication", () => {
  const never = choosePlacement({
    ...base,
    mode: "expert_parallel",
    current: blocks,
    loads: even,
    costs: costs(9),
  });
  assert.equal(never.choice, "expert_parallel");
  const always = choosePlacement({
    ...base,
    mode: "full_replication",
    current: blocks,
    loads: even,
    costs: costs(0),
  });
  assert.deepEqual([always.choice, always.action], ["full_replication", "switch"]);
  const full = versioned(fullReplicationPlan(model, two, "full"));
  const kept = choosePlacement({ ...base, current: full, loads: even, costs: costs(0) });
  assert.deepEqual([kept.choice, kept.action], ["full_replication", "keep"]);
  const one = choosePlacement({
    ...base,
    backends: [two[0]!],
    current: null,
    loads: null,
    costs: costs(9),
  });
  assert.equal(one.choice, "expert_parallel");
});

const rebalance = (overrides: Partial<RebalanceInput>): RebalanceInput => ({
  strategy: "dynamic",
  threshold: 0.9,
  pinned: null,
  current: null,
  loads: null,
  model,
  backends: two,
  redundancy: 0.25,
  budgets: unlimited(["b1", "b2"]),
  adjustIntervalMs: 60_000,
  placement: { mode: "auto", costs: costs(2) },
  ...overrides,
});

Deno.test("decideRebalance() starts with full replication when it fits, expert parallelism when not", () => {
  const fits = decideRebalance(rebalance({}));
  assert.equal(fits.action, "initial");
  assert.ok(isFullReplication(fits.plan!, 4));
  assert.equal(fits.placement?.choice, "full_replication");
  assert.match(fits.reason, /^no plan yet: full replication: every backend fits/);
  const tight = new Map<string, BackendBudget>([
    ["b1", { budgetBytes: 3 * MIB, expertBytes: MIB }],
    ["b2", { budgetBytes: 3 * MIB, expertBytes: MIB }],
  ]);
  const parallel = decideRebalance(rebalance({ budgets: tight }));
  assert.equal(parallel.action, "initial");
  assert.equal(parallel.plan!.slotsPerBackend, 3);
  assert.match(parallel.reason, /static placement/);
  assert.equal(parallel.placement?.choice, "expert_parallel");
  // Without the placement input (the simulator) nothing changes: the static plan.
  const legacy = decideRebalance(rebalance({ placement: undefined }));
  assert.match(legacy.reason, /static placement/);
  assert.equal(legacy.placement, undefined);
  // Budgets not reported yet: the first plan waits while the balancer says so.
  const waiting = decideRebalance(rebalance({
    budgets: unlimited(["b1"]),
    placement: { mode: "auto", costs: costs(2), waitForBudgets: true },
  }));
  assert.equal(waiting.action, "none");
  assert.match(waiting.reason, /waiting for every backend's memory budget/);
});

Deno.test("decideRebalance() switches a running expert-parallel plan to full replication, within adjust_interval", () => {
  const switched = decideRebalance(rebalance({ current: blocks, loads: even }));
  assert.equal(switched.action, "rebalance");
  assert.ok(isFullReplication(switched.plan!, 4));
  assert.equal(switched.predicted.after, 1);
  const held = decideRebalance(
    rebalance({ current: blocks, loads: even, sinceLastSwitchMs: 5000 }),
  );
  assert.equal(held.action, "none");
  assert.equal(held.held, "adjust_interval");
  assert.match(
    held.reason,
    /^held: last switch 5\.0 s ago < adjust_interval 60 s; full replication/,
  );
  // Running full replication stays; placement expert_parallel brings the static plan back.
  const full = versioned(fullReplicationPlan(model, two, "full"));
  const kept = decideRebalance(rebalance({ current: full, loads: even }));
  assert.equal(kept.action, "none");
  assert.match(kept.reason, /^full replication: version 3 hosts every expert/);
  const back = decideRebalance(rebalance({
    current: full,
    loads: even,
    placement: { mode: "expert_parallel", costs: costs(2) },
  }));
  assert.equal(back.action, "initial");
  assert.equal(back.plan!.slotsPerBackend, 3);
  // A budget that shrank below full replication: the plan is replaced.
  const shrunk = decideRebalance(rebalance({
    current: full,
    loads: even,
    budgets: new Map([["b1", { budgetBytes: 3 * MIB, expertBytes: MIB }], [
      "b2",
      { budgetBytes: 8 * MIB, expertBytes: MIB },
    ]]),
  }));
  assert.equal(shrunk.action, "initial");
  assert.match(
    shrunk.reason,
    /holds 4 experts per layer per backend, the memory budget of b1 fits 3/,
  );
});

Deno.test("no plan the balancer proposes exceeds any backend's memory budget (property)", () => {
  const backendsArb = fc.integer({ min: 1, max: 5 });
  fc.assert(
    fc.property(
      backendsArb,
      fc.integer({ min: 1, max: 3 }),
      fc.integer({ min: 2, max: 24 }),
      fc.array(fc.option(fc.integer({ min: 1, max: 120 }), { nil: null }), {
        minLength: 5,
        maxLength: 5,
      }),
      fc.array(fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 24, maxLength: 24 }), {
        minLength: 3,
        maxLength: 3,
      }),
      fc.constantFrom("auto" as const, "full_replication" as const, "expert_parallel" as const),
      fc.double({ min: 0, max: 10, noNaN: true }),
      fc.boolean(),
      (count, layers, experts, budgetMb, rawLoads, mode, remote, withCurrent) => {
        const backends = Array.from({ length: count }, (_, i) => ({
          id: `b${i}`,
          url: `http://127.0.0.1:${9001 + i}`,
        }));
        const budgets = new Map<string, BackendBudget>(backends.map((b, i) => [b.id, {
          budgetBytes: budgetMb[i] === null ? null : budgetMb[i]! * MIB,
          expertBytes: MIB,
        }]));
        const shape = { name: "m", layers, experts, groups: 1 };
        const loads = rawLoads.slice(0, layers).map((row) => row.slice(0, experts));
        const current = withCurrent
          ? versioned(staticPlan({ model: "m", layers, experts, backends }))
          : null;
        const decision = decideRebalance({
          strategy: "dynamic",
          threshold: 0.9,
          pinned: null,
          current,
          loads,
          model: shape,
          backends,
          redundancy: 0.25,
          budgets,
          adjustIntervalMs: 60_000,
          armed: true,
          placement: { mode, costs: costs(remote, 0.04) },
        });
        if (decision.plan === undefined) return;
        const plan = versioned(decision.plan);
        for (const backend of backends) {
          const budget = budgets.get(backend.id)!;
          assert.ok(plan.slotsPerBackend <= slotsWithin(budget, layers));
          const hosted = hostedExperts(plan, backend.id).reduce((n, l) => n + l.length, 0);
          if (budget.budgetBytes !== null) assert.ok(hosted * MIB <= budget.budgetBytes);
        }
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("decideRebalance() running full replication compares it with the static expert-parallel plan", () => {
  const full = versioned(fullReplicationPlan(model, two, "full"));
  const kept = decideRebalance(rebalance({ current: full, loads: even }));
  assert.equal(kept.placement?.expertParallel.slotsPerBackend, 3);
  assert.equal(kept.placement?.current?.kind, "full_replication");
  assert.ok(kept.placement!.gain! > 0);
});

/** The project's two models (docs/MODEL_FORMAT.md: expert file sizes). */
const DEMO = { name: "demo-moe", layers: 2, experts: 32, groups: 4 };
const DEMO_EXPERT_BYTES = 2_102_737;
const BENCH = { name: "bench-moe", layers: 3, experts: 256, groups: 8 };
const BENCH_EXPERT_BYTES = 264_144;

function pool(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    id: `backend-${i + 1}`,
    url: `http://127.0.0.1:${9001 + i}`,
  }));
}

Deno.test("the demo model on 2 backends without a budget: full replication, first and over a running static plan", () => {
  const backends = pool(2);
  const budgets = new Map(
    backends.map((b) => [b.id, { budgetBytes: null, expertBytes: DEMO_EXPERT_BYTES }]),
  );
  const settings = { mode: "auto" as const, costs: assumedCosts() };
  const first = decideRebalance({
    ...rebalance({}),
    model: DEMO,
    backends,
    budgets,
    placement: settings,
  });
  assert.equal(first.action, "initial");
  assert.ok(isFullReplication(first.plan!, 32));
  assert.equal(first.placement?.inputs.load, "even");
  // Over the static blocks (16 + 4 spare per backend) at 125 rows/s per expert (4,000 a layer).
  const fixed = versioned(
    staticPlan({ model: DEMO.name, layers: 2, experts: 32, backends, slotsPerBackend: 20 }),
  );
  const running = decideRebalance({
    ...rebalance({}),
    model: DEMO,
    backends,
    budgets,
    current: fixed,
    loads: [new Array(32).fill(125), new Array(32).fill(125)],
    placement: settings,
  });
  assert.equal(running.action, "rebalance");
  assert.ok(isFullReplication(running.plan!, 32));
  const analysis = running.placement!;
  // backend-1 lacks 16 of 32 experts, backend-2 12 (its spares repeat 4–7): with even
  // entry (16 + 12) ÷ 32 ÷ 2 = 43.75 % of rows cross.
  assert.equal(analysis.expertParallel.remoteShare, 0.4375);
  assert.ok(analysis.gain! > 0.3, String(analysis.gain));
  assert.equal(analysis.move!.experts, (16 + 12) * 2);
  assert.ok(analysis.move!.paybackS! < 1, String(analysis.move!.paybackS));
});

Deno.test("the bench model on 4 backends at 77.1 MiB: expert parallelism within the budget", () => {
  const backends = pool(4);
  const budgetBytes = Math.floor(77.1 * MIB);
  const budgets = new Map(
    backends.map((b) => [b.id, { budgetBytes, expertBytes: BENCH_EXPERT_BYTES }]),
  );
  const decision = decideRebalance({
    ...rebalance({}),
    model: BENCH,
    backends,
    budgets,
    placement: { mode: "auto", costs: costs(5) },
  });
  assert.equal(decision.action, "initial");
  assert.equal(decision.placement?.choice, "expert_parallel");
  assert.equal(
    decision.placement?.fits.reason,
    "the memory budget of backend-1 (77.1 MiB) holds 102 of 256 experts per layer " +
      "(3 layers × 0.3 MiB each)",
  );
  // The planner's sizing, 64 × 1.25 = 80 slots, is within the budget's 102.
  assert.equal(decision.plan!.slotsPerBackend, 80);
  // Even asked for, full replication does not happen where it does not fit.
  const forced = decideRebalance({
    ...rebalance({}),
    model: BENCH,
    backends,
    budgets,
    placement: { mode: "full_replication", costs: costs(5) },
  });
  assert.equal(forced.plan!.slotsPerBackend, 80);
});

Deno.test("decideRebalance() under strategy static places contiguous blocks, never full replication, after the budgets are known", () => {
  const fixed = decideRebalance(rebalance({ strategy: "static" }));
  assert.equal(fixed.action, "initial");
  assert.ok(!isFullReplication(fixed.plan!, 4), "static means blocks, even where everything fits");
  assert.match(fixed.reason, /static placement/);
  const waiting = decideRebalance(rebalance({
    strategy: "static",
    budgets: unlimited(["b1"]),
    placement: { mode: "auto", costs: costs(2), waitForBudgets: true },
  }));
  assert.equal(waiting.action, "none");
  assert.match(waiting.reason, /waiting for every backend's memory budget/);
});
