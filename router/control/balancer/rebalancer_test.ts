/** @module decideRebalance(): the balancer's decision table on crafted loads. */
import assert from "node:assert/strict";
import { type PlacementPlan, planProblem, staticPlan } from "../../../shared/placement_plan.ts";
import fc from "fast-check";
import { predictedBalance, replicasMoved } from "./plan_math.ts";
import {
  decideRebalance,
  nextTrigger,
  type RebalanceInput,
  TRIGGER_CONFIRM,
  TRIGGER_HYSTERESIS,
  type TriggerState,
  worstLayer,
} from "./rebalancer.ts";

const backends = [
  { id: "127.0.0.1:9001", url: "http://127.0.0.1:9001" },
  { id: "127.0.0.1:9002", url: "http://127.0.0.1:9002" },
];
const model = { name: "m", layers: 2, experts: 8, groups: 1 };
/** 8 experts over 2 backends with redundancy 0.25: 4 + 1 slots each. */
const current: PlacementPlan = {
  ...staticPlan({ model: "m", layers: 2, experts: 8, backends, slotsPerBackend: 5, version: 3 }),
  createdAt: 0,
};
const uniform = [Array(8).fill(10), Array(8).fill(10)];
const hot = [[10, 10, 100, 10, 10, 10, 10, 10], [10, 10, 100, 10, 10, 10, 10, 10]];

function input(overrides: Partial<RebalanceInput> = {}): RebalanceInput {
  return {
    strategy: "dynamic",
    threshold: 0.75,
    pinned: null,
    current,
    loads: uniform,
    model,
    backends,
    redundancy: 0.25,
    ...overrides,
  };
}

Deno.test("decideRebalance() does nothing when the balancer is off or disabled", () => {
  assert.equal(decideRebalance(input({ strategy: "off", current: null })).action, "none");
  const disabled = decideRebalance(input({ enabled: false, current: null, loads: hot }));
  assert.equal(disabled.action, "none");
  assert.match(disabled.reason, /disabled/);
  assert.equal(decideRebalance(input({ backends: [] })).reason, "no backends in the pool");
});

Deno.test("decideRebalance() starts from the static plan when there is none", () => {
  for (const strategy of ["dynamic", "static"] as const) {
    const decision = decideRebalance(input({ strategy, current: null, loads: null }));
    assert.equal(decision.action, "initial");
    assert.match(decision.reason, /^no plan yet: static placement$/);
    assert.deepEqual(decision.plan?.layers, current.layers);
    assert.equal(decision.plan?.slotsPerBackend, 5);
    assert.deepEqual(decision.predicted, { before: null, after: null });
  }
});

Deno.test("decideRebalance() re-places statically when the pool's backends changed", () => {
  const moved = [backends[0]!, { id: "127.0.0.1:9003", url: "http://127.0.0.1:9003" }];
  const decision = decideRebalance(input({ backends: moved, loads: hot }));
  assert.equal(decision.action, "initial");
  assert.match(decision.reason, /backends changed from \[127.0.0.1:9001, 127.0.0.1:9002\] to/);
  assert.deepEqual(decision.plan?.backends, moved);
  assert.ok(decision.predicted.before !== null && decision.predicted.after !== null);
  // Same ids, other url: changed too. A pin cannot keep a plan naming gone backends.
  const renamed = [backends[0]!, { ...backends[1]!, url: "http://10.0.0.2:9002" }];
  const pinned = decideRebalance(input({ backends: renamed, pinned: 3 }));
  assert.equal(pinned.action, "initial");
  assert.match(pinned.reason, /drops the pin of version 3/);
});

Deno.test("decideRebalance() re-places a plan that does not fit the model", () => {
  const decision = decideRebalance(input({ model: { ...model, experts: 10 } }));
  assert.equal(decision.action, "initial");
  assert.match(decision.reason, /version 3 does not fit the model: layers\[0\] places no replica/);
});

Deno.test("decideRebalance() keeps a balanced plan under uniform load", () => {
  const decision = decideRebalance(input());
  assert.equal(decision.action, "none");
  // Backend a: 5 + 5 + 10 + 10 + 5; backend b: 4 · 10 + 5, summed over two layers.
  assert.equal(decision.predicted.before, 80 / 90);
  assert.match(decision.reason, /balancedness 0\.889 ≥ threshold 0\.750 \(version 3\)/);
});

Deno.test("decideRebalance() re-plans around one hot expert", () => {
  const before = predictedBalance(current, hot).pool;
  assert.ok(before < 0.75);
  const decision = decideRebalance(input({ loads: hot }));
  assert.equal(decision.action, "rebalance");
  assert.equal(decision.predicted.before, before);
  assert.ok(decision.predicted.after! > before);
  assert.ok(decision.predicted.after! >= 0.95, `after ${decision.predicted.after}`);
  assert.match(
    decision.reason,
    /^worst layer balancedness 0\.680 < threshold 0\.750 \(layers 0, 1\); planned /,
  );
  const plan = { ...decision.plan!, version: 4, createdAt: 0 };
  assert.equal(planProblem(plan, model), null);
  assert.equal(plan.slotsPerBackend, 5);
  assert.deepEqual(plan.backends, backends);
  // The hot expert is on both backends.
  const perBackend = plan.layers[0]!.phy2log;
  assert.ok(perBackend.slice(0, 5).includes(2) && perBackend.slice(5).includes(2));
  assert.equal(worstLayer(plan, hot), decision.predicted.after);
});

Deno.test("decideRebalance() keeps the plan when planning cannot improve it", () => {
  const tiny = { name: "t", layers: 1, experts: 2, groups: 1 };
  const plan: PlacementPlan = {
    ...staticPlan({ model: "t", layers: 1, experts: 2, backends }),
    createdAt: 0,
  };
  const decision = decideRebalance(
    input({ model: tiny, current: plan, loads: [[100, 10]], redundancy: 0 }),
  );
  assert.equal(decision.action, "none");
  assert.match(decision.reason, /but the planned placement would reach only 0\.550/);
  assert.deepEqual(decision.predicted, { before: 0.55, after: 0.55 });
});

Deno.test("decideRebalance() honours a pin", () => {
  const decision = decideRebalance(input({ pinned: 3, loads: hot }));
  assert.equal(decision.action, "none");
  assert.equal(decision.reason, "pinned to version 3");
});

Deno.test("decideRebalance() never moves a static placement after the initial one", () => {
  const decision = decideRebalance(input({ strategy: "static", loads: hot }));
  assert.equal(decision.action, "none");
  assert.equal(decision.reason, "strategy static: placement stays fixed");
  // A dynamic plan left from before a config change goes back to static.
  const rebalanced = decideRebalance(input({ loads: hot }));
  const dynamicPlan = { ...rebalanced.plan!, version: 4, createdAt: 0 };
  const back = decideRebalance(input({ strategy: "static", current: dynamicPlan, loads: hot }));
  assert.equal(back.action, "initial");
  assert.match(back.reason, /strategy static: version 4 is not the static placement/);
  assert.deepEqual(back.plan?.layers, current.layers);
});

Deno.test("decideRebalance() waits for usable load", () => {
  assert.match(decideRebalance(input({ loads: null })).reason, /no usable expert load: none/);
  const zero = decideRebalance(input({ loads: [Array(8).fill(0), Array(8).fill(0)] }));
  assert.equal(zero.reason, "no expert load observed yet");
  const short = decideRebalance(input({ loads: [Array(8).fill(1)] }));
  assert.equal(short.action, "none");
  assert.match(short.reason, /load has 1 layers, model "m" has 2/);
  const bad = decideRebalance(input({ loads: [Array(8).fill(1), [1, 1, -1, 1, 1, 1, 1, 1]] }));
  assert.match(bad.reason, /layer 1, expert 2 is -1/);
});

Deno.test("decideRebalance() plans with groups that do not divide the experts", () => {
  const decision = decideRebalance(input({ loads: hot, model: { ...model, groups: 3 } }));
  assert.equal(decision.action, "rebalance");
  const grouped = decideRebalance(input({ loads: hot, model: { ...model, groups: 4 } }));
  assert.equal(grouped.action, "rebalance");
});

/** Layer 0 as uniform, layer 1 with one hot expert: the mean over layers hides it. */
const oneHotLayer = [Array(8).fill(10), [10, 10, 80, 10, 10, 10, 10, 10]];

Deno.test("decideRebalance() rebalances a single hot layer the pool mean hides", () => {
  const balance = predictedBalance(current, oneHotLayer);
  assert.ok(balance.pool >= 0.75, `pool ${balance.pool}`);
  assert.ok(balance.perLayer[1]! < 0.75, `layer 1 ${balance.perLayer[1]}`);
  const decision = decideRebalance(input({ loads: oneHotLayer }));
  assert.equal(decision.action, "rebalance");
  assert.match(decision.reason, /\(layer 1\); planned .* moving \d+ replicas?$/);
  const plan = { ...decision.plan!, version: 4, createdAt: 0 };
  // Moved from the current plan, not re-planned: layer 1 keeps most of its slots.
  const kept = plan.layers[1]!.phy2log.filter((e, s) => e === current.layers[1]!.phy2log[s]);
  assert.ok(kept.length >= plan.layers[1]!.phy2log.length / 2, `kept ${kept.length}`);
  assert.ok(worstLayer(plan, oneHotLayer) >= 0.75);
  // No more replicas moved than re-placing every layer.
  const full = decideRebalance(input({ loads: [oneHotLayer[1]!, oneHotLayer[1]!] }));
  assert.ok(
    replicasMoved(current, plan) <
      replicasMoved(current, { ...full.plan!, version: 5, createdAt: 0 }),
  );
});

Deno.test("decideRebalance() holds a switch within adjust_interval unless the gain is large", () => {
  const bounded = { adjustIntervalMs: 10_000, switchGain: 0.15 };
  const held = decideRebalance(
    input({ loads: hot, ...bounded, sinceLastSwitchMs: 4_000, switchGain: 0.5 }),
  );
  assert.equal(held.action, "none");
  // Worst layer 0.68: even a perfect plan gains at most 0.32 < 0.5, so it is not planned.
  assert.match(
    held.reason,
    /^held: last switch 4\.0 s ago < adjust_interval 10 s and gain at most 0\.320 < switch_gain 0\.500 \(worst layer 0\.680, not planned\)/,
  );
  assert.equal(held.predicted.after, null);
  // The same gain is large against switch_gain 0.15: it switches at once.
  assert.equal(
    decideRebalance(input({ loads: hot, ...bounded, sinceLastSwitchMs: 4_000 })).action,
    "rebalance",
  );
  // After the interval, or with no switch yet, any gain switches.
  const later = { ...bounded, switchGain: 0.5 };
  assert.equal(
    decideRebalance(input({ loads: hot, ...later, sinceLastSwitchMs: 10_000 })).action,
    "rebalance",
  );
  assert.equal(
    decideRebalance(input({ loads: hot, ...later, sinceLastSwitchMs: null })).action,
    "rebalance",
  );
  // Not armed (still confirming): nothing, with the reason.
  const confirming = decideRebalance(input({ loads: hot, armed: false }));
  assert.equal(confirming.action, "none");
  assert.match(confirming.reason, /confirming \(2 evaluations\)/);
});

Deno.test("nextTrigger(): arms after the confirmations, disarms above threshold + hysteresis", () => {
  let state: TriggerState = { below: 0, armed: false };
  state = nextTrigger(state, 0.7, 0.75);
  assert.equal(state.armed, TRIGGER_CONFIRM <= 1);
  state = nextTrigger(state, 0.7, 0.75);
  assert.equal(state.armed, true);
  // Just above the threshold: still armed (hysteresis band).
  state = nextTrigger(state, 0.76, 0.75);
  assert.equal(state.armed, true);
  state = nextTrigger(state, 0.75 + TRIGGER_HYSTERESIS, 0.75);
  assert.equal(state.armed, false);
  // One dip is not enough to arm again.
  state = nextTrigger(state, 0.5, 0.75);
  assert.equal(state.armed, false);
});

Deno.test("nextTrigger(): never flaps — armed ⇔ the rule, for every sequence", () => {
  fc.assert(fc.property(
    fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 40 }),
    fc.double({ min: 0.1, max: 0.95, noNaN: true }),
    (worsts, threshold) => {
      let state: TriggerState = { below: 0, armed: false };
      let flips = 0;
      let run = 0;
      for (const worst of worsts) {
        const next = nextTrigger(state, worst, threshold);
        run = worst < threshold ? run + 1 : 0;
        if (!state.armed && next.armed) assert.ok(run >= TRIGGER_CONFIRM);
        if (state.armed && !next.armed) assert.ok(worst >= threshold + TRIGGER_HYSTERESIS);
        if (worst < threshold && state.armed) assert.ok(next.armed);
        if (next.armed !== state.armed) flips++;
        state = next;
      }
      assert.ok(flips <= worsts.length);
    },
  ));
});

Deno.test("decideRebalance(): a switch never makes the worst layer worse (all loads)", () => {
  const row = fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 8, maxLength: 8 });
  fc.assert(
    fc.property(fc.tuple(row, row), (loads) => {
      const decision = decideRebalance(input({ loads }));
      if (decision.action !== "rebalance") return;
      const plan = { ...decision.plan!, version: 4, createdAt: 0 };
      assert.equal(planProblem(plan, model), null);
      assert.ok(worstLayer(plan, loads) > worstLayer(current, loads));
    }),
    { numRuns: 60 },
  );
});

const MiB = 1048576;
/** Budgets by backend id: `mb` MiB each for 1 MiB experts over 2 layers. */
function budgets(mbA: number | null, mbB: number | null) {
  return new Map([
    [backends[0]!.id, { budgetBytes: mbA === null ? null : mbA * MiB, expertBytes: MiB }],
    [backends[1]!.id, { budgetBytes: mbB === null ? null : mbB * MiB, expertBytes: MiB }],
  ]);
}

Deno.test("decideRebalance() places within the tightest memory budget: fewer replicas", () => {
  // 5 slots × 2 layers × 1 MiB = 10 MiB wanted; backend a allows 8 MiB → 4 slots (no spare).
  const first = decideRebalance(input({ current: null, loads: null, budgets: budgets(8, null) }));
  assert.equal(first.action, "initial");
  assert.equal(first.plan!.slotsPerBackend, 4);
  // The current 5-slot plan exceeds it: re-placed at once.
  const over = decideRebalance(input({ budgets: budgets(8, 40) }));
  assert.equal(over.action, "initial");
  assert.match(
    over.reason,
    /version 3 holds 5 experts per layer per backend, the memory budget of 127\.0\.0\.1:9001 fits 4/,
  );
  // Without spare slots a hot expert cannot be replicated: nothing better to switch to.
  const static4 = { ...first.plan!, version: 4, createdAt: 0 };
  const tight = decideRebalance(input({ current: static4, loads: hot, budgets: budgets(8, 8) }));
  assert.equal(tight.action, "none");
  assert.match(tight.reason, /would reach only/);
  // At exactly the budget (10 MiB = 5 slots) the hot expert gets its replica.
  const hotPlan = decideRebalance(input({ loads: hot, budgets: budgets(10, 10) }));
  assert.equal(hotPlan.action, "rebalance");
  assert.equal(hotPlan.plan!.slotsPerBackend, 5);
});

Deno.test("decideRebalance() fails clearly when not even one replica per expert fits", () => {
  const decision = decideRebalance(input({ budgets: budgets(6, null) }));
  assert.equal(decision.action, "none");
  assert.match(
    decision.failed!,
    /fits 3 experts per layer .* 2 backends × 3 < 8 experts: not even one replica/,
  );
  assert.match(decision.reason, /^cannot place experts: /);
});

Deno.test("decideRebalance(): every plan fits every budget (all budgets and loads)", () => {
  const row = fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 8, maxLength: 8 });
  const mb = fc.option(fc.integer({ min: 1, max: 24 }), { nil: null });
  fc.assert(
    fc.property(fc.tuple(row, row), mb, mb, fc.boolean(), (loads, a, b, fresh) => {
      const decision = decideRebalance(
        input({ loads, budgets: budgets(a, b), ...(fresh ? { current: null } : {}) }),
      );
      if (decision.plan === undefined) return;
      for (const limit of [a, b]) {
        if (limit !== null) assert.ok(decision.plan.slotsPerBackend * 2 * MiB <= limit * MiB);
      }
      assert.ok(decision.plan.slotsPerBackend * 2 >= 8, "every expert has a replica");
    }),
    { numRuns: 80 },
  );
});

Deno.test("decideRebalance(): held ⇔ the unheld decision's gain < switch_gain (all loads)", () => {
  // The cheap early hold (no planning) must decide exactly as planning and comparing would.
  const row = fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 8, maxLength: 8 });
  fc.assert(
    fc.property(fc.tuple(row, row), fc.double({ min: 0.01, max: 1, noNaN: true }), (l, gain) => {
      const loads = [l[0], l[1]];
      const free = decideRebalance(input({ loads }));
      const held = decideRebalance(
        input({ loads, sinceLastSwitchMs: 1_000, adjustIntervalMs: 60_000, switchGain: gain }),
      );
      const large = free.action === "rebalance" &&
        free.predicted.after! - free.predicted.before! >= gain;
      assert.equal(held.action, large ? "rebalance" : "none", held.reason);
    }),
    { numRuns: 80 },
  );
});

Deno.test("decideRebalance(): the trigger judges balancedness across backends, not expert skew", () => {
  // Two hot experts, one on each backend: the experts' load is very skewed (mean ÷ max
  // across experts far below the threshold), the backends' work is even.
  const skewed = [[100, 1, 1, 1, 100, 1, 1, 1], [100, 1, 1, 1, 100, 1, 1, 1]];
  const acrossExperts = skewed[0]!.reduce((a, b) => a + b, 0) / 8 / 100;
  assert.ok(acrossExperts < 0.3, `${acrossExperts}`);
  const acrossBackends = worstLayer(current, skewed);
  assert.ok(acrossBackends >= 0.75, `${acrossBackends}`);
  const kept = decideRebalance(input({ loads: skewed }));
  assert.equal(kept.action, "none");
  assert.match(kept.reason, /^worst layer balancedness 0\.\d+ ≥ threshold 0\.750/);
  assert.equal(kept.predicted.before, acrossBackends);
  // Both hot experts on one backend: the same expert skew, now low across backends.
  const oneSided = [[100, 100, 1, 1, 1, 1, 1, 1], [100, 100, 1, 1, 1, 1, 1, 1]];
  assert.ok(worstLayer(current, oneSided) < 0.75);
  assert.equal(decideRebalance(input({ loads: oneSided })).action, "rebalance");
});

Deno.test("decideRebalance(): in the hysteresis band a switch must gain the band's width", () => {
  // Worst layer 0.68 under `hot`; armed with threshold 0.6 it is in the band [0.6, 0.65+).
  const before = worstLayer(current, hot);
  const big = decideRebalance(input({ loads: hot, threshold: 0.6, armed: true }));
  assert.equal(big.action, "rebalance");
  assert.ok(big.predicted.after! - before >= TRIGGER_HYSTERESIS);
  assert.match(big.reason, /≥ threshold 0\.600 \(armed until 0\.650\)/);
  // Backend 0 hosts 0, 1, 2, 3, 0 and backend 1 hosts 4, 5, 6, 7, 1: 35 vs 36 → worst layer
  // 0.986 with threshold 0.95 (armed until 1.0, never disarmed): no plan can gain 0.05, so
  // nothing moves and the planner is not asked.
  const almostRow = [10, 10, 10, 10, 7.5, 7.5, 7.5, 8.5];
  const almost = [almostRow, almostRow];
  assert.ok(Math.abs(worstLayer(current, almost) - 35.5 / 36) < 1e-12);
  const near = decideRebalance(input({ loads: almost, threshold: 0.95, armed: true }));
  assert.equal(near.action, "none");
  assert.match(near.reason, /no plan can gain 0\.050$/);
  // Every switch from inside the band gains at least the band's width (all loads).
  const row = fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 8, maxLength: 8 });
  fc.assert(
    fc.property(fc.tuple(row, row), fc.double({ min: 0.3, max: 0.99, noNaN: true }), (l, t) => {
      const loads = [l[0], l[1]];
      const decision = decideRebalance(input({ loads, threshold: t, armed: true }));
      const was = worstLayer(current, loads);
      if (decision.action === "rebalance" && was >= t) {
        assert.ok(decision.predicted.after! - was >= TRIGGER_HYSTERESIS - 1e-12);
      }
    }),
    { numRuns: 80 },
  );
});
