import assert from "node:assert/strict";
import fc from "fast-check";
import { chooseEvictions, planWarm, type Resident, usedBytes } from "./eviction_policy.ts";

/** Residents E0..E{n-1} of 10 bytes each, used in that order (E0 least recently). */
function residents(n: number, flags: Record<string, Partial<Resident>> = {}): Resident[] {
  return Array.from({ length: n }, (_, i) => ({
    key: `L0/E${i}`,
    bytes: 10,
    lastUsedAt: i,
    pinned: false,
    busy: false,
    ...flags[`L0/E${i}`],
  }));
}

Deno.test("chooseEvictions() evicts least recently used first, just enough to fit", () => {
  const warm = residents(5);
  // Shuffled input: the order comes from lastUsedAt, not from the array.
  const shuffled = [warm[3]!, warm[0]!, warm[4]!, warm[2]!, warm[1]!];
  assert.deepEqual(chooseEvictions(shuffled, 30), { evict: ["L0/E0", "L0/E1"], fits: true });
  assert.deepEqual(chooseEvictions(shuffled, 50), { evict: [], fits: true });
  assert.deepEqual(chooseEvictions(shuffled, 30, { extraBytes: 10 }), {
    evict: ["L0/E0", "L0/E1", "L0/E2"],
    fits: true,
  });
});

Deno.test("chooseEvictions() never evicts pinned, busy or protected experts", () => {
  const warm = residents(5, {
    "L0/E0": { pinned: true },
    "L0/E1": { busy: true },
  });
  const { evict, fits } = chooseEvictions(warm, 20, { protect: new Set(["L0/E2"]) });
  assert.deepEqual(evict, ["L0/E3", "L0/E4"]);
  // 30 bytes remain (pinned, busy, protected): over the budget, nothing else may go.
  assert.equal(fits, false);
});

Deno.test("chooseEvictions() with an unlimited budget evicts nothing", () => {
  assert.deepEqual(chooseEvictions(residents(4), null, { extraBytes: 1e12 }), {
    evict: [],
    fits: true,
  });
});

Deno.test("chooseEvictions() keeps its rules for any residents and budget", () => {
  const resident = fc.record({
    bytes: fc.integer({ min: 1, max: 100 }),
    lastUsedAt: fc.integer({ min: 0, max: 1000 }),
    pinned: fc.boolean(),
    busy: fc.boolean(),
  });
  fc.assert(
    fc.property(
      fc.array(resident, { maxLength: 30 }),
      fc.integer({ min: 1, max: 2000 }),
      fc.integer({ min: 0, max: 200 }),
      (raw, budget, extra) => {
        const warm = raw.map((r, i) => ({ ...r, key: `L0/E${i}` }));
        const { evict, fits } = chooseEvictions(warm, budget, { extraBytes: extra });
        const evicted = new Set(evict);
        const byKey = new Map(warm.map((r) => [r.key, r]));
        // Only evictable experts go.
        for (const key of evict) assert.ok(!byKey.get(key)!.pinned && !byKey.get(key)!.busy);
        const left = warm.filter((r) => !evicted.has(r.key));
        const leftBytes = usedBytes(left) + extra;
        assert.equal(fits, leftBytes <= budget);
        const evictableLeft = left.filter((r) => !r.pinned && !r.busy);
        // Not fitting means nothing evictable is left.
        if (!fits) assert.equal(evictableLeft.length, 0);
        // LRU: every evicted expert was used no later than every evictable one kept.
        for (const key of evict) {
          for (const kept of evictableLeft) {
            assert.ok(byKey.get(key)!.lastUsedAt <= kept.lastUsedAt);
          }
        }
        // Minimal: without the last eviction it would not have fitted.
        if (evict.length > 0) {
          const last = byKey.get(evict.at(-1)!)!;
          assert.ok(leftBytes + last.bytes > budget);
        }
      },
    ),
  );
});

Deno.test("planWarm() warms in priority order until the budget is full and skips the rest", () => {
  const request = (i: number) => ({ key: `L1/E${i}`, bytes: 10 });
  // Budget 50, 3 warm (E0..E2 of layer 0, E1 pinned): room for 2, plus 2 evictable.
  const plan = planWarm(
    [request(0), request(1), request(2), request(3), request(4), request(5)],
    residents(3, { "L0/E1": { pinned: true } }),
    50,
  );
  assert.deepEqual(plan, {
    load: ["L1/E0", "L1/E1", "L1/E2", "L1/E3"],
    alreadyWarm: [],
    evict: ["L0/E0", "L0/E2"],
    skipped: ["L1/E4", "L1/E5"],
  });
});

Deno.test("planWarm() reports warm requests, counts duplicates once, evicts the unrequested first", () => {
  // Budget 30, warm E0 (least recent), E1, E2; asked for E3, E0, E3 again.
  const plan = planWarm(
    [{ key: "L0/E3", bytes: 10 }, { key: "L0/E0", bytes: 10 }, { key: "L0/E3", bytes: 10 }],
    residents(3),
    30,
  );
  // E0 is the least recently used but requested: E1 (unrequested) goes instead.
  assert.deepEqual(plan, {
    load: ["L0/E3"],
    alreadyWarm: ["L0/E0"],
    evict: ["L0/E1"],
    skipped: [],
  });
});

Deno.test("planWarm() evicts a lower-priority warm request for a higher one when nothing else may go", () => {
  // Budget 20: E0 pinned, E1 warm; asked for E5 first, then E1.
  const plan = planWarm(
    [{ key: "L0/E5", bytes: 10 }, { key: "L0/E1", bytes: 10 }],
    residents(2, { "L0/E0": { pinned: true } }),
    20,
  );
  assert.deepEqual(plan, {
    load: ["L0/E5"],
    alreadyWarm: [],
    evict: ["L0/E1"],
    skipped: ["L0/E1"],
  });
});

Deno.test("planWarm() never evicts busy experts and skips what cannot fit", () => {
  const plan = planWarm(
    [{ key: "L0/E7", bytes: 10 }, { key: "L0/E8", bytes: 25 }],
    residents(2, { "L0/E0": { busy: true }, "L0/E1": { busy: true } }),
    30,
  );
  assert.deepEqual(plan, { load: ["L0/E7"], alreadyWarm: [], evict: [], skipped: ["L0/E8"] });
});

Deno.test("planWarm() with an unlimited budget loads every cold request", () => {
  const plan = planWarm(
    [{ key: "L0/E1", bytes: 10 }, { key: "L0/E9", bytes: 10 }],
    residents(2),
    null,
  );
  assert.deepEqual(plan, { load: ["L0/E9"], alreadyWarm: ["L0/E1"], evict: [], skipped: [] });
});
