import assert from "node:assert/strict";
import fc from "fast-check";
import { decideLease, leads, type Lease, released } from "./lease.ts";

const TTL = 10_000;

Deno.test("decideLease() takes a free lease in term 1, renews its own, follows another's", () => {
  const first = decideLease(null, "a", 1000, TTL);
  assert.deepEqual(first, {
    kind: "acquire",
    next: { holder: "a", term: 1, expiresAt: 11_000, since: 1000 },
  });
  const lease = (first as { next: Lease }).next;
  assert.deepEqual(decideLease(lease, "a", 4000, TTL), {
    kind: "renew",
    next: { ...lease, expiresAt: 14_000 },
  });
  assert.deepEqual(decideLease(lease, "b", 10_999, TTL), { kind: "follow", holder: lease });
});

Deno.test("decideLease() lets anyone take an expired lease in a new term, its old holder too", () => {
  const lease: Lease = { holder: "a", term: 4, expiresAt: 11_000, since: 0 };
  assert.deepEqual(decideLease(lease, "b", 11_000, TTL), {
    kind: "acquire",
    next: { holder: "b", term: 5, expiresAt: 21_000, since: 11_000 },
  });
  const back = decideLease(lease, "a", 12_000, TTL);
  assert.equal(back.kind, "acquire");
  assert.equal((back as { next: Lease }).next.term, 5);
  assert.throws(() => decideLease(null, "a", 0, 0), /ttl must be > 0/);
});

Deno.test("leads() stops a holder marginMs before expiry and never for another term", () => {
  const lease: Lease = { holder: "a", term: 2, expiresAt: 10_000, since: 0 };
  assert.equal(leads(lease, "a", 2, 8_999, 1000), true);
  assert.equal(leads(lease, "a", 2, 9_000, 1000), false);
  assert.equal(leads(lease, "a", 1, 5_000, 1000), false);
  assert.equal(leads(lease, "b", 2, 5_000, 1000), false);
  assert.equal(leads(released(lease, 5_000), "a", 2, 5_000, 0), false);
});

Deno.test("property: routers applying decideLease() never lead at once; terms only grow", () => {
  const routers = ["a", "b", "c"];
  fc.assert(fc.property(
    fc.array(
      fc.record({ router: fc.constantFrom(...routers), gap: fc.integer({ min: 0, max: 15_000 }) }),
      {
        minLength: 1,
        maxLength: 60,
      },
    ),
    (steps) => {
      let lease: Lease | null = null;
      let now = 0;
      // What each router believes it holds (its last successful write).
      const held = new Map<string, Lease>();
      for (const { router, gap } of steps) {
        now += gap;
        const decision = decideLease(lease, router, now, TTL);
        if (decision.kind !== "follow") {
          assert.ok(decision.next.term >= (lease?.term ?? 0));
          lease = decision.next;
          held.set(router, lease);
        }
        const leaders = routers.filter((r) => {
          const mine = held.get(r);
          return mine !== undefined && leads(mine, r, mine.term, now, 0);
        });
        assert.ok(leaders.length <= 1, `${leaders} lead at ${now}`);
      }
    },
  ));
});
