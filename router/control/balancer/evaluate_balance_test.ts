/** @module evaluateBalance(): the trigger's confirmations and the hold, evaluation by evaluation. */
import assert from "node:assert/strict";
import { type PlacementPlan, staticPlan } from "../../../shared/placement_plan.ts";
import { evaluateBalance, type EvaluationInput, INITIAL_TRIGGER } from "./evaluate_balance.ts";
import { TRIGGER_CONFIRM } from "./rebalancer.ts";

const backends = [
  { id: "a", url: "http://a" },
  { id: "b", url: "http://b" },
];
const model = { name: "m", layers: 1, experts: 4, groups: 1 };
/** 4 experts on 2 backends, no spare slots: a hosts 0, 1; b hosts 2, 3. */
const initial: PlacementPlan = {
  ...staticPlan({ model: "m", layers: 1, experts: 4, backends, slotsPerBackend: 2, version: 1 }),
  createdAt: 0,
};
const settings = {
  enabled: true,
  strategy: "dynamic" as const,
  threshold: 0.75,
  adjust_interval: 60_000,
  switch_gain: 0.15,
  redundancy: 0,
};
// Experts 0 and 1 hot: a carries 20 of 22 → worst layer (11 / 20) = 0.55; the planner can
// pair a hot with a cold expert: 11 / 11 = 1.
const skewed = [[10, 10, 1, 1]];
// a carries 20 of 26 → 0.65; the best pairing {0, 2} / {1, 3} reaches 13 / 15 = 0.867.
const milder = [[10, 10, 5, 1]];

function evaluation(overrides: Partial<EvaluationInput>) {
  return evaluateBalance({
    settings,
    trigger: INITIAL_TRIGGER,
    now: 0,
    lastSwitchAt: null,
    model,
    backends,
    current: initial,
    pinned: null,
    loads: skewed,
    ...overrides,
  });
}

Deno.test("evaluateBalance(): the trigger arms after TRIGGER_CONFIRM evaluations, then it switches", () => {
  let trigger = INITIAL_TRIGGER;
  for (let i = 1; i < TRIGGER_CONFIRM; i++) {
    const step = evaluation({ trigger, now: i * 2000 });
    assert.equal(step.worst, 0.55);
    assert.equal(step.trigger.armed, false);
    assert.equal(step.decision.action, "none");
    assert.match(step.decision.reason, /confirming/);
    trigger = step.trigger;
  }
  const armed = evaluation({ trigger, now: TRIGGER_CONFIRM * 2000 });
  assert.equal(armed.trigger.armed, true);
  assert.equal(armed.trigger.below, TRIGGER_CONFIRM);
  assert.equal(armed.decision.action, "rebalance");
  assert.equal(armed.decision.predicted.after, 1);
});

Deno.test("evaluateBalance(): a balanced load disarms; no load keeps the trigger as it was", () => {
  const armed = { below: 3, armed: true };
  const balanced = evaluation({ trigger: armed, loads: [[1, 1, 1, 1]] });
  assert.equal(balanced.worst, 1);
  assert.deepEqual(balanced.trigger, { below: 0, armed: false });
  assert.equal(balanced.decision.action, "none");
  const unknown = evaluation({ trigger: armed, loads: null });
  assert.equal(unknown.worst, null);
  assert.deepEqual(unknown.trigger, { below: 0, armed: true });
});

Deno.test("evaluateBalance(): within adjust_interval only a gain ≥ switch_gain switches", () => {
  const armed = { below: 5, armed: true };
  // 30 s after a switch: the gain 0.45 (0.55 → 1) is ≥ switch_gain 0.15 → switches.
  const large = evaluation({ trigger: armed, now: 90_000, lastSwitchAt: 60_000 });
  assert.equal(large.decision.action, "rebalance");
  // With switch_gain 0.5 even a perfect plan (gain ≤ 0.45) is too small: held, not planned.
  const cheap = evaluation({
    settings: { ...settings, switch_gain: 0.5 },
    trigger: armed,
    now: 90_000,
    lastSwitchAt: 60_000,
  });
  assert.equal(cheap.decision.action, "none");
  assert.match(
    cheap.decision.reason,
    /^held: last switch 30\.0 s ago < adjust_interval 60 s and gain at most 0\.450 < switch_gain 0\.500 \(worst layer 0\.550, not planned\)$/,
  );
  // switch_gain 0.3: a perfect plan could gain 0.35, so it plans; the plan gains 0.217: held.
  const planned = evaluation({
    settings: { ...settings, switch_gain: 0.3 },
    trigger: armed,
    now: 90_000,
    lastSwitchAt: 60_000,
    loads: milder,
  });
  assert.equal(planned.decision.action, "none");
  assert.match(
    planned.decision.reason,
    /gain 0\.217 < switch_gain 0\.300 \(worst layer 0\.650 → 0\.867\)$/,
  );
  // Once adjust_interval has passed, any gain switches.
  const later = evaluation({
    settings: { ...settings, switch_gain: 0.3 },
    trigger: armed,
    now: 120_000,
    lastSwitchAt: 60_000,
    loads: milder,
  });
  assert.equal(later.decision.action, "rebalance");
});
