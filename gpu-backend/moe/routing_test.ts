/** @module Tests of gated top-k routing: hand-computed cases and property tests. */
import assert from "node:assert/strict";
import fc from "fast-check";
import type { GateOptions } from "./gate_options.ts";
import { groupRowsByExpert, routeTokens } from "./routing.ts";

const plain: GateOptions = { topK: 2, groups: 1, topkGroup: 1, temperature: 1 };

function assertNear(actual: number, expected: number, tolerance: number): void {
  assert(
    Math.abs(actual - expected) <= tolerance,
    `${actual} is not within ${tolerance} of ${expected}`,
  );
}

function assertClose(actual: ArrayLike<number>, expected: number[], tolerance = 1e-7): void {
  assert.deepEqual(actual.length, expected.length);
  expected.forEach((value, i) => {
    assert(Math.abs(actual[i]! - value) <= tolerance, `index ${i}: ${actual[i]} vs ${value}`);
  });
}

Deno.test("routeTokens() picks the top-k experts per row, best first", () => {
  const logits = Float32Array.from([0.1, 2, -1, 1, /* row 1 */ 3, 0, 0.5, -2]);
  const routing = routeTokens(logits, 2, 4, plain);
  assert.deepEqual([...routing.experts], [1, 3, 0, 2]);
  const e = Math.E;
  const half = Math.exp(2.5);
  assertClose(routing.weights, [e / (e + 1), 1 / (e + 1), half / (half + 1), 1 / (half + 1)]);
});

Deno.test("routeTokens() breaks score ties towards the lower expert index", () => {
  const routing = routeTokens(Float32Array.from([1, 3, 3, 3]), 1, 4, plain);
  assert.deepEqual([...routing.experts], [1, 2]);
  assertClose(routing.weights, [0.5, 0.5]);
});

Deno.test("routeTokens() drops a high-scoring expert whose group is not kept", () => {
  // Groups {0,1} {2,3} {4,5}; group scores 9, 8, 2; only the best group survives, so
  // expert 2 (second best globally, 8) loses to expert 1 (0).
  const logits = Float32Array.from([9, 0, 8, -1, 1, 2]);
  const routing = routeTokens(logits, 1, 6, { topK: 2, groups: 3, topkGroup: 1, temperature: 1 });
  assert.deepEqual([...routing.experts], [0, 1]);
  assertClose(routing.weights, [1 / (1 + Math.exp(-9)), Math.exp(-9) / (1 + Math.exp(-9))]);
  const open = routeTokens(logits, 1, 6, { ...plain, topK: 2 });
  assert.deepEqual([...open.experts], [0, 2]);
});

Deno.test("routeTokens() keeps several groups by their best expert, ties to the lower group", () => {
  // Group scores 5, 5, 7 → keep groups 2 and 0 (0 beats 1 on the tie).
  const logits = Float32Array.from([5, 4.9, 5, 4.95, 7, -3]);
  const routing = routeTokens(logits, 1, 6, { topK: 3, groups: 3, topkGroup: 2, temperature: 1 });
  assert.deepEqual([...routing.experts], [4, 0, 1]);
});

Deno.test("routeTokens() keeps the choice and sharpens or flattens weights with temperature", () => {
  const logits = Float32Array.from([2, 1, 0, -1]);
  const cases: [number, number[]][] = [
    [1, [0.7310585786300049, 0.2689414213699951]],
    [0.5, [0.8807970779778823, 0.11920292202211755]],
    [2, [0.6224593312018546, 0.3775406687981454]],
    [Infinity, [0.5, 0.5]],
  ];
  for (const [temperature, expected] of cases) {
    const routing = routeTokens(logits, 1, 4, { ...plain, temperature });
    assert.deepEqual([...routing.experts], [0, 1], `temperature ${temperature}`);
    assertClose(routing.weights, expected);
  }
});

Deno.test("routeTokens() weights of every row sum to 1", () => {
  const logits = Float32Array.from({ length: 3 * 8 }, (_, i) => Math.sin(i * 1.7) * 4);
  const routing = routeTokens(logits, 3, 8, { topK: 3, groups: 4, topkGroup: 2, temperature: 0.7 });
  for (let row = 0; row < 3; row++) {
    const sum = routing.weights.subarray(row * 3, row * 3 + 3).reduce((a, b) => a + b, 0);
    assertNear(sum, 1, 1e-6);
  }
});

Deno.test("routeTokens() handles zero rows", () => {
  const routing = routeTokens(new Float32Array(0), 0, 4, plain);
  assert.deepEqual(routing.experts.length, 0);
  assert.deepEqual(routing.weights.length, 0);
});

Deno.test("routeTokens() rejects bad arguments with a RangeError naming the problem", () => {
  const logits = new Float32Array(8);
  const cases: [() => unknown, RegExp][] = [
    [
      () => routeTokens(new Float32Array(7), 2, 4, plain),
      /logits length 7 is not rows \* experts = 8/,
    ],
    [() => routeTokens(logits, 2, 4, { ...plain, topK: 5 }), /topK 5 exceeds experts 4/],
    [() => routeTokens(logits, 2, 4, { ...plain, groups: 3 }), /not divisible by groups 3/],
    [
      () => routeTokens(logits, 2, 4, { topK: 3, groups: 2, topkGroup: 1, temperature: 1 }),
      /topkGroup 1 keeps 2 experts, fewer than topK 3/,
    ],
    [() => routeTokens(logits, 2, 4, { ...plain, temperature: 0 }), /temperature must be > 0/],
    [() => routeTokens(logits, 2, 4, { ...plain, temperature: -1 }), /temperature must be > 0/],
    [() => routeTokens(logits, 2, 4, { ...plain, temperature: NaN }), /temperature must be > 0/],
    [() => routeTokens(logits, 2, 4, { ...plain, topK: 0 }), /topK must be an integer >= 1/],
    [
      () => routeTokens(logits, 2, 4, { topK: 1, groups: 2, topkGroup: 3, temperature: 1 }),
      /topkGroup must be an integer in \[1, groups = 2\]/,
    ],
    [
      () => routeTokens(Float32Array.from([0, 0, NaN, 0, 0, 0, 0, 0]), 2, 4, plain),
      /logit of row 0, expert 2 is NaN/,
    ],
  ];
  for (const [call, message] of cases) {
    assert.throws(call, (error: unknown) => {
      assert(error instanceof RangeError);
      assert(error.message.startsWith("Cannot route tokens: "), error.message);
      assert(message.test(error.message), error.message);
      return true;
    });
  }
});

Deno.test("groupRowsByExpert() lists each expert's rows and flat routing positions", () => {
  const routing = {
    experts: Int32Array.from([1, 3, 3, 0, 1, 0]),
    weights: new Float32Array(6),
  };
  const groups = groupRowsByExpert(routing, 3, 2, 4);
  assert.deepEqual(groups.map((g) => [...g.rows]), [[1, 2], [0, 2], [], [0, 1]]);
  assert.deepEqual(groups.map((g) => [...g.positions]), [[3, 5], [0, 4], [], [1, 2]]);
});

Deno.test("groupRowsByExpert() rejects expert ids outside the expert range", () => {
  const routing = { experts: Int32Array.from([0, 4]), weights: new Float32Array(2) };
  assert.throws(() => groupRowsByExpert(routing, 1, 2, 4), RangeError);
});

/** A random valid routing problem: sizes, options and coarse logits (so ties happen). */
const routingProblem = fc
  .record({
    groups: fc.integer({ min: 1, max: 4 }),
    groupSize: fc.integer({ min: 1, max: 4 }),
    rows: fc.integer({ min: 1, max: 6 }),
    temperature: fc.double({ min: 0.25, max: 20, noNaN: true }),
  })
  .chain(({ groups, groupSize, rows, temperature }) =>
    fc.integer({ min: 1, max: groups }).chain((topkGroup) =>
      fc.record({
        experts: fc.constant(groups * groupSize),
        rows: fc.constant(rows),
        options: fc.record({
          topK: fc.integer({ min: 1, max: topkGroup * groupSize }),
          groups: fc.constant(groups),
          topkGroup: fc.constant(topkGroup),
          temperature: fc.constant(temperature),
        }),
        logits: fc.array(fc.integer({ min: -40, max: 40 }).map((v) => v / 4), {
          minLength: rows * groups * groupSize,
          maxLength: rows * groups * groupSize,
        }),
      })
    )
  );

/** The groups an independent oracle keeps for one row: best group score first, ties → lower. */
function keptGroups(scores: number[], groups: number, topkGroup: number): Set<number> {
  const size = scores.length / groups;
  const best = Array.from(
    { length: groups },
    (_, g) => Math.max(...scores.slice(g * size, (g + 1) * size)),
  );
  const order = best.map((_, g) => g).sort((a, b) => best[b]! - best[a]! || a - b);
  return new Set(order.slice(0, topkGroup));
}

Deno.test("routeTokens() satisfies the routing invariants for any valid input", () => {
  fc.assert(
    fc.property(routingProblem, ({ experts, rows, options, logits }) => {
      const { topK, groups, topkGroup } = options;
      const routing = routeTokens(Float32Array.from(logits), rows, experts, options);
      assert.deepEqual(routing.experts.length, rows * topK);
      const groupSize = experts / groups;
      for (let row = 0; row < rows; row++) {
        const chosen = [...routing.experts.subarray(row * topK, (row + 1) * topK)];
        const weights = [...routing.weights.subarray(row * topK, (row + 1) * topK)];
        const scores = logits.slice(row * experts, (row + 1) * experts);
        assert.deepEqual(new Set(chosen).size, topK, "experts are distinct");
        assert(chosen.every((e) => e >= 0 && e < experts));
        assert(weights.every((w) => w > 0 && w <= 1), `weights ${weights}`);
        assertNear(weights.reduce((a, b) => a + b, 0), 1, 1e-6);
        const chosenGroups = new Set(chosen.map((e) => Math.floor(e / groupSize)));
        assert(chosenGroups.size <= topkGroup, "chosen experts lie in at most topkGroup groups");
        const kept = keptGroups(scores, groups, topkGroup);
        for (let e = 0; e < experts; e++) {
          if (chosen.includes(e) || !kept.has(Math.floor(e / groupSize))) continue;
          for (const c of chosen) {
            assert(scores[c]! >= scores[e]!, `chosen ${c} scores below unchosen eligible ${e}`);
            if (scores[c] === scores[e]) assert(c < e, `tie between ${c} and ${e} not to lower`);
          }
        }
        for (let k = 1; k < topK; k++) assert(weights[k - 1]! >= weights[k]!, "best first");
      }
    }),
    { numRuns: 500 },
  );
});

Deno.test("routeTokens() chooses the same experts at every temperature", () => {
  fc.assert(
    fc.property(
      routingProblem,
      fc.double({ min: 0.01, max: 100, noNaN: true }),
      ({ experts, rows, options, logits }, temperature) => {
        const input = Float32Array.from(logits);
        const a = routeTokens(input, rows, experts, options);
        const b = routeTokens(input, rows, experts, { ...options, temperature });
        assert.deepEqual([...a.experts], [...b.experts]);
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("groupRowsByExpert() accounts for every selection exactly once", () => {
  fc.assert(
    fc.property(routingProblem, ({ experts, rows, options, logits }) => {
      const routing = routeTokens(Float32Array.from(logits), rows, experts, options);
      const groups = groupRowsByExpert(routing, rows, options.topK, experts);
      const seen = new Set<number>();
      groups.forEach((group, expert) => {
        group.positions.forEach((position, i) => {
          assert.deepEqual(routing.experts[position], expert);
          assert.deepEqual(Math.floor(position / options.topK), group.rows[i]);
          seen.add(position);
        });
      });
      assert.deepEqual(seen.size, rows * options.topK);
    }),
    { numRuns: 200 },
  );
});
