import assert from "node:assert/strict";
import fc from "fast-check";
import { limitSlots, slotsWithin } from "./budget_slots.ts";

const MiB = 1048576;

Deno.test("slotsWithin(): floor(budget ÷ (layers · expert bytes)); unlimited without a budget", () => {
  assert.equal(slotsWithin({ budgetBytes: 24 * MiB, expertBytes: 2 * MiB }, 2), 6);
  assert.equal(slotsWithin({ budgetBytes: 24 * MiB - 1, expertBytes: 2 * MiB }, 2), 5);
  assert.equal(slotsWithin({ budgetBytes: null, expertBytes: 2 * MiB }, 2), Infinity);
});

Deno.test("limitSlots(): the tightest budget sets the slots; too tight fails with the numbers", () => {
  const budgets = new Map([
    ["b1", { budgetBytes: 24 * MiB, expertBytes: 2 * MiB }],
    ["b2", { budgetBytes: 40 * MiB, expertBytes: 2 * MiB }],
  ]);
  const options = { experts: 8, layers: 2, backends: ["b1", "b2"], budgets };
  assert.deepEqual(limitSlots(10, options), { ok: true, slots: 6, limitedBy: "b1" });
  assert.deepEqual(limitSlots(5, options), { ok: true, slots: 5, limitedBy: null });
  const tight = new Map([["b1", { budgetBytes: 6 * MiB, expertBytes: 2 * MiB }]]);
  const failed = limitSlots(5, { ...options, budgets: tight });
  assert.equal(failed.ok, false);
  assert.match(
    (failed as { reason: string }).reason,
    /budget of b1 \(6\.0 MiB\) fits 1 expert per layer \(2 layers × 2\.0 MiB each\); 2 backends × 1 < 8 experts: not even one replica per expert fits/,
  );
});

Deno.test("limitSlots(): within every budget and never above the wanted slots (all inputs)", () => {
  fc.assert(fc.property(
    fc.integer({ min: 1, max: 64 }),
    fc.integer({ min: 1, max: 8 }),
    fc.array(fc.option(fc.integer({ min: 1, max: 200 }), { nil: null }), {
      minLength: 1,
      maxLength: 6,
    }),
    fc.integer({ min: 0, max: 8 }),
    (experts, layers, budgetsMb, spare) => {
      const ids = budgetsMb.map((_, i) => `b${i}`);
      const wanted = Math.ceil(experts / ids.length) + spare;
      const budgets = new Map(
        budgetsMb.map((
          mb,
          i,
        ) => [ids[i]!, { budgetBytes: mb === null ? null : mb * MiB, expertBytes: MiB }]),
      );
      const limit = limitSlots(wanted, { experts, layers, backends: ids, budgets });
      if (!limit.ok) {
        // Failing is only right when the tightest budget cannot hold one replica each.
        const tightest = Math.min(
          ...budgetsMb.map((mb) => mb === null ? Infinity : Math.floor(mb / layers)),
        );
        assert.ok(Math.min(tightest, wanted) * ids.length < experts);
        return;
      }
      assert.ok(limit.slots <= wanted);
      assert.ok(limit.slots * ids.length >= experts);
      for (const mb of budgetsMb) {
        if (mb !== null) assert.ok(limit.slots * layers * MiB <= mb * MiB);
      }
    },
  ));
});
