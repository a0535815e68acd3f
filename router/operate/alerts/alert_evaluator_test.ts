import assert from "node:assert/strict";
import fc from "fast-check";
import type { AlertCondition } from "./alert_conditions.ts";
import { type AlertState, evaluateAlerts } from "./alert_evaluator.ts";

const HOT: AlertCondition = {
  id: "expert_hot:backend-1:L0/E3",
  kind: "expert_hot",
  subject: "backend-1 L0/E3",
  value: 0.9,
  threshold: 0.8,
  message: "hot",
};

/** Runs `rounds` (true: HOT holds) and returns fire/resolve round indexes. */
function run(rounds: readonly boolean[], raiseAfter: number, clearAfter: number) {
  let state: AlertState = new Map();
  const events: { round: number; what: "fired" | "resolved" }[] = [];
  rounds.forEach((holds, round) => {
    const result = evaluateAlerts(state, holds ? [HOT] : [], {
      now: 1000 * round,
      raiseAfter,
      clearAfter,
    });
    state = result.state;
    for (const _ of result.fired) events.push({ round, what: "fired" });
    for (const _ of result.resolved) events.push({ round, what: "resolved" });
  });
  return { events, state };
}

Deno.test("evaluateAlerts() fires after raiseAfter rounds and resolves after clearAfter", () => {
  let state: AlertState = new Map();
  const round = (holds: boolean, now: number, value = 0.9) => {
    const result = evaluateAlerts(state, holds ? [{ ...HOT, value }] : [], {
      now,
      raiseAfter: 3,
      clearAfter: 2,
    });
    state = result.state;
    return result;
  };
  assert.equal(round(true, 1000).fired.length, 0);
  assert.equal(round(true, 2000).active.length, 0, "pending, not firing");
  const third = round(true, 3000, 0.95);
  assert.deepEqual(third.fired, [{
    id: HOT.id,
    kind: "expert_hot",
    subject: "backend-1 L0/E3",
    state: "firing",
    firedAt: 3000,
    resolvedAt: undefined,
    value: 0.95,
    threshold: 0.8,
    message: "hot",
  }]);
  assert.equal(round(true, 4000, 0.99).active[0]?.value, 0.99, "a firing alert's value follows");
  const gone = round(false, 5000);
  assert.equal(gone.resolved.length, 0);
  assert.equal(gone.active.length, 1, "still firing one round after it went away");
  const cleared = round(false, 6000);
  assert.equal(cleared.resolved.length, 1);
  assert.equal(cleared.resolved[0]?.state, "resolved");
  assert.equal(cleared.resolved[0]?.resolvedAt, 6000);
  assert.equal(cleared.resolved[0]?.firedAt, 3000);
  assert.equal(cleared.active.length, 0);
  assert.equal(state.size, 0, "resolved alerts are forgotten");
});

Deno.test("evaluateAlerts(): an alternating condition never flaps", () => {
  fc.assert(fc.property(
    fc.integer({ min: 2, max: 6 }),
    fc.integer({ min: 2, max: 6 }),
    fc.integer({ min: 1, max: 60 }),
    fc.boolean(),
    (raiseAfter, clearAfter, length, startsOn) => {
      const rounds = Array.from({ length }, (_, i) => (i % 2 === 0) === startsOn);
      assert.deepEqual(run(rounds, raiseAfter, clearAfter).events, []);
    },
  ));
  // With raiseAfter 1 it fires once and then never resolves while it keeps coming back.
  const { events } = run(Array.from({ length: 40 }, (_, i) => i % 2 === 0), 1, 2);
  assert.deepEqual(events, [{ round: 0, what: "fired" }]);
});

Deno.test("evaluateAlerts(): every fire follows raiseAfter present rounds, every resolve clearAfter absent ones", () => {
  fc.assert(fc.property(
    fc.array(fc.boolean(), { maxLength: 80 }),
    fc.integer({ min: 1, max: 5 }),
    fc.integer({ min: 1, max: 5 }),
    (rounds, raiseAfter, clearAfter) => {
      const { events } = run(rounds, raiseAfter, clearAfter);
      let firing = false;
      for (const { round, what } of events) {
        const window = rounds.slice(
          round + 1 - (what === "fired" ? raiseAfter : clearAfter),
          round + 1,
        );
        const expected = what === "fired";
        assert.ok(window.length === (what === "fired" ? raiseAfter : clearAfter));
        assert.ok(window.every((holds) => holds === expected), `${what} at ${round}`);
        assert.equal(firing, what === "resolved", "fires and resolves alternate");
        firing = !firing;
      }
      // And it does fire once a run of raiseAfter present rounds happened.
      const firstRun = rounds.findIndex((_, i) =>
        i + 1 >= raiseAfter && rounds.slice(i + 1 - raiseAfter, i + 1).every(Boolean)
      );
      assert.equal(events[0]?.round, firstRun === -1 ? undefined : firstRun);
    },
  ));
});

Deno.test("evaluateAlerts() forgets a pending condition that goes away and rejects bad knobs", () => {
  const first = evaluateAlerts(new Map(), [HOT], { now: 0, raiseAfter: 3, clearAfter: 3 });
  const second = evaluateAlerts(first.state, [], { now: 1, raiseAfter: 3, clearAfter: 3 });
  assert.equal(second.state.size, 0);
  assert.throws(
    () => evaluateAlerts(new Map(), [], { now: 0, raiseAfter: 0, clearAfter: 1 }),
    /raiseAfter must be an integer >= 1, got 0/,
  );
});
