import assert from "node:assert/strict";
import {
  hostedExperts,
  PlacementPlanSchema,
  planProblem,
  replicasByExpert,
  replicaWeightsFromUtilisation,
  staticPlan,
} from "./placement_plan.ts";

const backends = [
  { id: "backend-1", url: "http://127.0.0.1:9001" },
  { id: "backend-2", url: "http://127.0.0.1:9002" },
];
const model = { name: "m", layers: 2, experts: 8 };

Deno.test("staticPlan() puts experts in contiguous blocks and fills spare slots round-robin", () => {
  const plan = staticPlan({
    model: "m",
    layers: 2,
    experts: 8,
    backends,
    slotsPerBackend: 5,
    now: 0,
  });
  assert.deepEqual(plan.layers[0]!.phy2log, [0, 1, 2, 3, 0, 4, 5, 6, 7, 1]);
  assert.equal(planProblem(plan, model), null);
  assert.deepEqual(hostedExperts(plan, "backend-1"), [[0, 1, 2, 3], [0, 1, 2, 3]]);
  assert.deepEqual(hostedExperts(plan, "backend-2")[1], [1, 4, 5, 6, 7]);
  assert.deepEqual(hostedExperts(plan, "nobody"), [[], []]);
  PlacementPlanSchema.parse(plan);
});

Deno.test("replicasByExpert() lists each expert's slots, backends and weights", () => {
  const plan = staticPlan({
    model: "m",
    layers: 1,
    experts: 8,
    backends,
    slotsPerBackend: 5,
    now: 0,
  });
  plan.layers[0]!.replicaWeights = [1, 1, 1, 1, 3, 1, 1, 1, 1, 1];
  const replicas = replicasByExpert(plan, 0, 8);
  assert.deepEqual(replicas[0], [
    { slot: 0, backend: "backend-1", weight: 1 },
    { slot: 4, backend: "backend-1", weight: 3 },
  ]);
  assert.deepEqual(replicas[1]!.map((r) => r.backend), ["backend-1", "backend-2"]);
  assert.deepEqual(replicas[7], [{ slot: 8, backend: "backend-2", weight: 1 }]);
});

Deno.test("planProblem() names what does not fit the model", () => {
  const good = staticPlan({ model: "m", layers: 2, experts: 8, backends, now: 0 });
  assert.equal(planProblem(good, model), null);
  assert.match(planProblem({ ...good, model: "x" }, model)!, /model "x"/);
  assert.match(planProblem({ ...good, layers: [good.layers[0]!] }, model)!, /1 layers/);
  const missing = structuredClone(good);
  missing.layers[1]!.phy2log[3] = 0;
  assert.match(planProblem(missing, model)!, /layers\[1\] places no replica of expert 3/);
  const short = structuredClone(good);
  short.layers[0]!.phy2log.pop();
  assert.match(planProblem(short, model)!, /layers\[0\]\.phy2log has 7 slots, expected 8/);
  const outOfRange = structuredClone(good);
  outOfRange.layers[0]!.phy2log[0] = 9;
  assert.match(planProblem(outOfRange, model)!, /expert 9, model has 8/);
  assert.match(planProblem({ ...good, backends: [backends[0]!, backends[0]!] }, model)!, /twice/);
});

Deno.test("staticPlan() refuses too few slots", () => {
  assert.throws(
    () => staticPlan({ model: "m", layers: 1, experts: 8, backends, slotsPerBackend: 3 }),
    /2 backends × 3 slots < 8 experts/,
  );
});

Deno.test("replicaWeightsFromUtilisation() gives busy backends' replicas less weight", () => {
  const plan = staticPlan({
    model: "m",
    layers: 1,
    experts: 4,
    backends,
    slotsPerBackend: 2,
    now: 0,
  });
  const weights = replicaWeightsFromUtilisation(
    plan,
    new Map([["backend-1", 0.9], ["backend-2", 0.2]]),
  );
  assert.deepEqual(weights[0]!.map((w) => Math.round(w * 100) / 100), [0.1, 0.1, 0.8, 0.8]);
  // Saturated backends keep a floor; unknown ones count as half busy.
  const floored = replicaWeightsFromUtilisation(plan, new Map([["backend-1", 1]]));
  assert.deepEqual(floored[0], [0.05, 0.05, 0.5, 0.5]);
});
