/**
 * @module Contract tests every placement planner passes (valid, consistent plans; groups stay
 * on their node), the planner's never-worse guarantee, hand-checked cases and input errors.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { type EplbPlacement, greedyPlacement } from "./eplb_greedy.ts";
import { planPlacement, planStats } from "./eplb_planner.ts";
import { type PlacementInput, type PlacementPolicy, resolvePolicy } from "./placement_input.ts";

type Planner = (input: PlacementInput, options?: { policy?: PlacementPolicy }) => EplbPlacement;

const PLANNERS: [string, Planner][] = [
  ["greedyPlacement", greedyPlacement],
  ["planPlacement", planPlacement],
  [
    "planPlacement (refine: false)",
    (input, options) => planPlacement(input, { ...options, refine: false }),
  ],
];

/** A seeded mulberry32 uniform generator in `[0, 1)` (kept here: router tests import no tools/). */
function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Zipf-like loads: `scale / rank^exponent` over a permutation given by `keys`. */
function zipfLoads(keys: readonly number[], exponent: number, scale = 10_000): number[] {
  const order = keys.map((_, i) => i).sort((a, b) => keys[a]! - keys[b]! || a - b);
  const loads = new Array<number>(keys.length);
  order.forEach((expert, rank) => loads[expert] = Math.round(scale / (rank + 1) ** exponent));
  return loads;
}

/** Random valid inputs: cluster shapes that satisfy every divisibility rule, skewed loads. */
function inputArbitrary(hierarchical: boolean): fc.Arbitrary<PlacementInput> {
  return fc.record({
    nodes: fc.integer({ min: 1, max: 4 }),
    gpusPerNode: fc.integer({ min: 1, max: 4 }),
    groupsPerNode: fc.integer({ min: 1, max: 3 }),
    groupSize: fc.integer({ min: 1, max: 6 }),
    extraPerGpu: fc.integer({ min: 0, max: 3 }),
    layers: fc.integer({ min: 1, max: 3 }),
  }).chain(({ nodes, gpusPerNode, groupsPerNode, groupSize, extraPerGpu, layers }) => {
    const gpus = nodes * gpusPerNode;
    const groups = hierarchical ? nodes * groupsPerNode : groupsPerNode;
    const experts = groups * groupSize;
    const perGpu = Math.ceil(experts / gpus) + extraPerGpu;
    const row = fc.oneof(
      fc.tuple(
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), {
          minLength: experts,
          maxLength: experts,
        }),
        fc.double({ min: 0.5, max: 2, noNaN: true }),
      ).map(([keys, exponent]) => zipfLoads(keys, exponent)),
      fc.array(fc.nat(1000), { minLength: experts, maxLength: experts }),
      // Loads are token rates: subnormal values (5e-324) underflow when split over replicas
      // and are no load anyone measures, so they count as 0.
      fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }).map((w) => w < 1e-9 ? 0 : w), {
        minLength: experts,
        maxLength: experts,
      }),
    );
    return fc.array(row, { minLength: layers, maxLength: layers }).map((weight) => ({
      weight,
      num_replicas: gpus * perGpu,
      num_groups: groups,
      num_nodes: nodes,
      num_gpus: gpus,
    }));
  });
}

/** Throws unless `plan` is a valid, self-consistent placement for `input`. */
function assertValidPlan(input: PlacementInput, plan: EplbPlacement): void {
  const experts = input.weight[0]!.length;
  const slotsPerGpu = input.num_replicas / input.num_gpus;
  const maxReplicas = Math.max(...plan.logcnt.flat());
  assert.equal(plan.phy2log.length, input.weight.length);
  input.weight.forEach((weights, layer) => {
    const phy2log = plan.phy2log[layer]!;
    const logcnt = plan.logcnt[layer]!;
    assert.equal(phy2log.length, input.num_replicas);
    assert.ok(phy2log.every((log) => Number.isInteger(log) && log >= 0 && log < experts));
    assert.ok(logcnt.every((count) => count >= 1), "every expert has a replica");
    assert.equal(logcnt.reduce((a, b) => a + b, 0), input.num_replicas);
    const seen = new Set<number>();
    for (let log = 0; log < experts; log++) {
      const row = plan.log2phy[layer]![log]!;
      assert.equal(row.length, maxReplicas);
      const slots = row.slice(0, logcnt[log]);
      assert.ok(slots.every((slot) => phy2log[slot] === log), "log2phy points at its expert");
      assert.ok(row.slice(logcnt[log]).every((slot) => slot === -1), "log2phy is -1 padded");
      slots.forEach((slot) => seen.add(slot));
    }
    assert.equal(seen.size, input.num_replicas, "every slot appears once in log2phy");
    const loads = new Array<number>(input.num_gpus).fill(0);
    phy2log.forEach((log, slot) =>
      loads[Math.floor(slot / slotsPerGpu)]! += weights[log]! / logcnt[log]!
    );
    loads.forEach((load, gpu) =>
      assert.ok(Math.abs(load - plan.gpuLoad[layer]![gpu]!) <= 1e-9 * (1 + load))
    );
    const balancedness = plan.balancedness[layer]!;
    assert.ok(
      balancedness > 0 && balancedness <= 1 + 1e-12,
      `balancedness ${balancedness} in (0, 1]`,
    );
  });
}

/** Throws unless every group's experts (and so all their replicas) sit on one node. */
function assertGroupsStayOnNodes(input: PlacementInput, plan: EplbPlacement): void {
  const groupSize = input.weight[0]!.length / input.num_groups;
  const slotsPerNode = input.num_replicas / input.num_nodes;
  for (const phy2log of plan.phy2log) {
    const nodeOfGroup = new Map<number, number>();
    phy2log.forEach((log, slot) => {
      const group = Math.floor(log / groupSize);
      const node = Math.floor(slot / slotsPerNode);
      assert.equal(nodeOfGroup.get(group) ?? node, node, `group ${group} spans nodes`);
      nodeOfGroup.set(group, node);
    });
  }
}

for (const [name, plan] of PLANNERS) {
  Deno.test(`${name}: every plan is valid and consistent (hierarchical inputs)`, () => {
    fc.assert(
      fc.property(inputArbitrary(true), (input) => {
        const result = plan(input);
        assertValidPlan(input, result);
        assertGroupsStayOnNodes(input, result);
      }),
      { numRuns: 150 },
    );
  });

  Deno.test(`${name}: every plan is valid and consistent (global policy)`, () => {
    fc.assert(
      fc.property(inputArbitrary(false), (input) => {
        assertValidPlan(input, plan(input, { policy: "global" }));
      }),
      { numRuns: 150 },
    );
  });

  Deno.test(`${name}: all-zero loads give balancedness 1`, () => {
    const input = {
      weight: [[0, 0, 0, 0]],
      num_replicas: 6,
      num_groups: 2,
      num_nodes: 2,
      num_gpus: 2,
    };
    const result = plan(input);
    assertValidPlan(input, result);
    assert.deepEqual(result.balancedness, [1]);
  });
}

Deno.test("planPlacement() never has a higher max GPU load than greedyPlacement()", () => {
  fc.assert(
    fc.property(
      inputArbitrary(true),
      fc.constantFrom<PlacementPolicy>("auto", "global"),
      (input, policy) => {
        const greedy = planStats(greedyPlacement(input, { policy })).maxGpuLoad;
        const planned = planStats(planPlacement(input, { policy })).maxGpuLoad;
        planned.forEach((max, layer) =>
          assert.ok(max <= greedy[layer]! + 1e-9, `${max} > ${greedy[layer]}`)
        );
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("planPlacement() lowers the max GPU load on most seeded Zipf inputs", () => {
  const random = createRandom(11);
  let improved = 0;
  let layers = 0;
  for (let i = 0; i < 60; i++) {
    const experts = [16, 32, 64][i % 3]!;
    const input = {
      weight: [zipfLoads(Array.from({ length: experts }, random), 0.5 + random())],
      num_replicas: experts + experts / 4,
      num_groups: 4,
      num_nodes: 2,
      num_gpus: experts / 4,
    };
    const greedy = planStats(greedyPlacement(input)).maxGpuLoad;
    const planned = planStats(planPlacement(input)).maxGpuLoad;
    planned.forEach((max, layer) => {
      layers++;
      if (max < greedy[layer]! * (1 - 1e-9)) improved++;
    });
  }
  assert.ok(improved / layers > 0.5, `improved ${improved} of ${layers} layers`);
});

Deno.test("planPlacement() on loads [10, 1, 1, 1] with 6 slots on 2 GPUs balances exactly", () => {
  const input = {
    weight: [[10, 1, 1, 1]],
    num_replicas: 6,
    num_groups: 1,
    num_nodes: 1,
    num_gpus: 2,
  };
  const plan = planPlacement(input);
  // Greedy gives the hot expert 3 replicas (max GPU load 23/3); two replicas of experts 0
  // and 1 split the total 13 evenly: 5 + 1 + 0.5 per GPU.
  assert.deepEqual(plan.logcnt, [[2, 2, 1, 1]]);
  assert.deepEqual(plan.gpuLoad, [[6.5, 6.5]]);
  assert.deepEqual(plan.balancedness, [1]);
  assertValidPlan(input, plan);
  assert.ok(planStats(greedyPlacement(input)).maxGpuLoad[0]! > 7.6);
});

Deno.test("planStats() summarises balancedness and max GPU load per layer", () => {
  const stats = planStats({
    phy2log: [[0, 1], [0, 1]],
    log2phy: [[[0], [1]], [[0], [1]]],
    logcnt: [[1, 1], [1, 1]],
    gpuLoad: [[0, 4], [2, 2]],
    balancedness: [0.5, 1],
  });
  assert.deepEqual(stats, {
    layers: 2,
    meanBalancedness: 0.75,
    minBalancedness: 0.5,
    maxGpuLoad: [4, 2],
  });
});

Deno.test("planPlacement() plans DeepSeek-V3 scale (61 × 256 → 288 slots, 36 GPUs, 9 nodes)", () => {
  const random = createRandom(3);
  const input = {
    weight: Array.from({ length: 61 }, () => zipfLoads(Array.from({ length: 256 }, random), 1)),
    num_replicas: 288,
    num_groups: 8,
    num_nodes: 9,
    num_gpus: 36,
  };
  assert.equal(resolvePolicy(input), "global");
  const plan = planPlacement(input);
  assertValidPlan(input, plan);
  assert.ok(plan.phy2log.every((row) => row.length === 288));
  const greedy = planStats(greedyPlacement(input));
  assert.ok(planStats(plan).maxGpuLoad.every((max, layer) => max <= greedy.maxGpuLoad[layer]!));
});

Deno.test("resolvePolicy() picks hierarchical only when groups divide evenly over nodes", () => {
  const input = {
    weight: [[1, 1, 1, 1]],
    num_replicas: 4,
    num_groups: 2,
    num_nodes: 2,
    num_gpus: 2,
  };
  assert.equal(resolvePolicy(input), "hierarchical");
  assert.equal(resolvePolicy(input, "global"), "global");
  assert.equal(resolvePolicy({ ...input, num_groups: 1 }), "global");
  assert.throws(
    () => resolvePolicy({ ...input, num_groups: 1 }, "hierarchical"),
    { name: "RangeError", message: /"num_groups" \(1\) must be divisible by "num_nodes" \(2\)/ },
  );
});

const VALID = { weight: [[4, 3, 2, 1]], num_replicas: 6, num_groups: 2, num_nodes: 1, num_gpus: 2 };

const BAD_INPUTS: [string, unknown, string, RegExp][] = [
  [
    "negative load",
    { ...VALID, weight: [[4, -1, 2, 1]] },
    "RangeError",
    /"weight\[0\]\[1\]" must be a finite number ≥ 0, got -1/,
  ],
  [
    "NaN load",
    { ...VALID, weight: [[4, NaN, 2, 1]] },
    "RangeError",
    /"weight\[0\]\[1\]" .* got NaN/,
  ],
  [
    "infinite load",
    { ...VALID, weight: [[Infinity, 3, 2, 1]] },
    "RangeError",
    /"weight\[0\]\[0\]" .* got Infinity/,
  ],
  ["string load", { ...VALID, weight: [[4, "3", 2, 1]] }, "TypeError", /"weight\[0\]\[1\]"/],
  ["no layers", { ...VALID, weight: [] }, "RangeError", /"weight" must have at least one layer/],
  [
    "empty layer",
    { ...VALID, weight: [[]] },
    "RangeError",
    /"weight\[0\]" must have at least one expert/,
  ],
  [
    "ragged layers",
    { ...VALID, weight: [[4, 3, 2, 1], [1, 2]] },
    "RangeError",
    /"weight\[1\]" has 2 experts/,
  ],
  [
    "fewer replicas than experts",
    { ...VALID, num_replicas: 2 },
    "RangeError",
    /"num_replicas" \(2\) must be at least the number of logical experts \(4\)/,
  ],
  [
    "replicas not divisible by GPUs",
    { ...VALID, num_replicas: 5 },
    "RangeError",
    /"num_replicas" \(5\) must be divisible by "num_gpus" \(2\)/,
  ],
  [
    "GPUs not divisible by nodes",
    { ...VALID, num_nodes: 3, num_groups: 1 },
    "RangeError",
    /"num_gpus" \(2\) must be divisible by "num_nodes" \(3\)/,
  ],
  [
    "experts not divisible by groups",
    { ...VALID, num_groups: 3 },
    "RangeError",
    /"num_groups" \(3\) must divide the number of logical experts \(4\)/,
  ],
  [
    "fractional GPUs",
    { ...VALID, num_gpus: 1.5 },
    "RangeError",
    /"num_gpus" must be a positive integer, got 1.5/,
  ],
  [
    "zero nodes",
    { ...VALID, num_nodes: 0 },
    "RangeError",
    /"num_nodes" must be a positive integer, got 0/,
  ],
  [
    "missing field",
    { ...VALID, num_groups: undefined },
    "TypeError",
    /"num_groups" must be a positive integer/,
  ],
  ["not an object", [1, 2], "TypeError", /input must be an object/],
];

for (const [name, planner] of PLANNERS.slice(0, 2)) {
  for (const [what, input, errorName, message] of BAD_INPUTS) {
    Deno.test(`${name}: rejects ${what} with a message naming the field`, () => {
      assert.throws(() => planner(input as PlacementInput), (error: Error) => {
        assert.equal(error.name, errorName);
        assert.match(error.message, /^Cannot plan placement: /);
        assert.match(error.message, message);
        return true;
      });
    });
  }
}
