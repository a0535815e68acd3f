/**
 * The contract every routing policy passes: it returns an element of the candidate
 * list, spreads traffic over all candidates, and handles a single candidate. Policies
 * that read reported load get the same load for every backend.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { backendView, seededRandom } from "../../../tests/_support/router/views.ts";
import { createPolicy, POLICY_NAMES } from "./create_policy.ts";

for (const name of POLICY_NAMES) {
  const make = (seed = 1) =>
    createPolicy(name, {
      random: seededRandom(seed),
      loadOf: () => ({ utilisation: 0.5, inFlight: 1 }),
    });

  Deno.test(`${name}: createPolicy() returns a policy with that name`, () => {
    assert.equal(make().name, name);
  });

  Deno.test(`${name}: pick() always returns an element of the candidate list`, () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 50 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1, max: 30 }),
        (loads, seed, picks) => {
          const candidates = loads.map((load, i) => backendView(`10.0.0.${i}:9001`, load));
          const policy = make(seed);
          for (let i = 0; i < picks; i++) {
            assert.ok(candidates.includes(policy.pick(candidates)));
          }
        },
      ),
    );
  });

  Deno.test(`${name}: pick() spreads equal-load traffic over every candidate`, () => {
    const candidates = [0, 1, 2, 3, 4].map((i) => backendView(`10.0.0.${i}:9001`));
    const policy = make(7);
    const counts = new Map<string, number>();
    const picks = 5000;
    for (let i = 0; i < picks; i++) {
      const id = policy.pick(candidates).id;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    assert.equal(counts.size, candidates.length);
    for (const [id, count] of counts) {
      assert.ok(count > picks / candidates.length * 0.8, `${id} got only ${count} of ${picks}`);
    }
  });

  Deno.test(`${name}: pick() with one candidate returns it`, () => {
    const only = backendView("10.0.0.1:9001", 99);
    const policy = make();
    for (let i = 0; i < 10; i++) assert.equal(policy.pick([only]), only);
  });

  Deno.test(`${name}: pick() with no candidates throws a RangeError`, () => {
    assert.throws(() => make().pick([]), RangeError);
  });
}

Deno.test("createPolicy() rejects an unknown name", () => {
  assert.throws(() => createPolicy("nope" as "p2c"), /unknown name "nope"/);
});
