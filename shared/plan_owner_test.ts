import assert from "node:assert/strict";
import fc from "fast-check";
import {
  admitOwner,
  ownerFromHeaders,
  ownerHeaders,
  type PlanOwner,
  POOL_HEADER,
  TERM_HEADER,
} from "./plan_owner.ts";

const a1: PlanOwner = { pool: "pool-a", term: 1 };

Deno.test("admitOwner() lets the first fenced call claim a backend and refuses other pools", () => {
  assert.deepEqual(admitOwner(null, a1), { ok: true, owner: a1, claimed: true });
  const other = admitOwner(a1, { pool: "pool-b", term: 9 });
  assert.equal(other.ok, false);
  assert.equal(!other.ok && other.reason, "other_pool");
  assert.match(!other.ok ? other.message : "", /follows pool "pool-a" \(term 1\), not "pool-b"/);
});

Deno.test("admitOwner() refuses older terms and unfenced calls once claimed", () => {
  const older = admitOwner({ pool: "pool-a", term: 3 }, a1);
  assert.equal(!older.ok && older.reason, "older_term");
  assert.deepEqual(admitOwner({ pool: "pool-a", term: 3 }, { pool: "pool-a", term: 4 }), {
    ok: true,
    owner: { pool: "pool-a", term: 4 },
    claimed: false,
  });
  const unfenced = admitOwner(a1, null);
  assert.equal(!unfenced.ok && unfenced.reason, "unfenced");
  assert.deepEqual(admitOwner(null, null), { ok: true, owner: null, claimed: false });
});

Deno.test("admitOwner(): the term a backend follows never decreases and its pool never changes", () => {
  const owner = fc.record({ pool: fc.constantFrom("a", "b"), term: fc.nat(20) });
  fc.assert(fc.property(fc.array(fc.option(owner, { nil: null })), (calls) => {
    let current: PlanOwner | null = null;
    for (const call of calls) {
      const decision = admitOwner(current, call);
      if (!decision.ok) continue;
      const next: PlanOwner | null = decision.owner ?? current;
      if (current !== null) {
        assert.equal(next!.pool, current.pool);
        assert.ok(next!.term >= current.term);
      }
      current = next;
    }
  }));
});

Deno.test("ownerFromHeaders() reads what ownerHeaders() writes and names malformed headers", () => {
  assert.deepEqual(ownerFromHeaders(new Headers(ownerHeaders(a1))), a1);
  assert.equal(ownerFromHeaders(new Headers()), null);
  assert.match(
    String(ownerFromHeaders(new Headers({ [POOL_HEADER]: "p" }))),
    new RegExp(`got only ${POOL_HEADER}`),
  );
  assert.match(
    String(ownerFromHeaders(new Headers({ [POOL_HEADER]: "p", [TERM_HEADER]: "-1" }))),
    /must be an integer >= 0/,
  );
});
