import assert from "node:assert/strict";
import fc from "fast-check";
import { createJsonLogger } from "../../../shared/logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import {
  MemoryLease,
  MemoryLeaseStore,
} from "../../../tests/_support/router/memory_lease_store.ts";
import { LeaderElector } from "./leader_elector.ts";

const TTL = 10_000;
const RENEW = 3000;
const quiet = createJsonLogger({ level: "error", write: () => {} });

function routers(names: string[], clock: ManualClock, shared = new MemoryLease()) {
  return names.map((id) => {
    const store = new MemoryLeaseStore(shared);
    const elector = new LeaderElector({
      store,
      id,
      ttlMs: TTL,
      renewIntervalMs: RENEW,
      clock,
      logger: quiet,
    });
    return { id, store, elector };
  });
}

const leaders = (rs: { elector: LeaderElector }[]) =>
  rs.filter((r) => r.elector.isLeader()).map((r) => r.elector.id);

Deno.test("LeaderElector: one of three routers is elected and keeps the lease by renewing", async () => {
  const clock = new ManualClock(0);
  const rs = routers(["a", "b", "c"], clock);
  const changes: string[] = [];
  rs.forEach((r) => r.elector.onChange((on) => changes.push(`${r.id}:${on}`)));
  await Promise.all(rs.map((r) => r.elector.start()));
  assert.deepEqual(leaders(rs), ["a"]);
  assert.deepEqual(changes, ["a:true"]);
  await clock.advance(60_000);
  assert.deepEqual(leaders(rs), ["a"]);
  assert.equal(rs[0]!.elector.term(), 1);
  assert.equal(changes.length, 1);
  await Promise.all(rs.map((r) => r.elector.stop()));
});

Deno.test("LeaderElector: a leader cut off lapses and another takes over within the TTL", async () => {
  const clock = new ManualClock(0);
  const shared = new MemoryLease();
  const rs = routers(["a", "b", "c"], clock, shared);
  await Promise.all(rs.map((r) => r.elector.start()));
  await clock.advance(RENEW); // a renews at t=3000: expiry 13 000
  rs[0]!.store.cutOff = true;
  const lastRenewal = shared.lease!.expiresAt - TTL;
  // While its lease runs, nobody else leads; a stops acting a margin before expiry.
  await clock.advance(8_999 - clock.now() + lastRenewal);
  assert.deepEqual(leaders(rs), ["a"]);
  await clock.advance(1);
  assert.deepEqual(leaders(rs), []);
  await clock.advance(lastRenewal + TTL - clock.now() + 1);
  const [next] = leaders(rs);
  assert.ok(next === "b" || next === "c", `new leader ${next}`);
  assert.ok(shared.lease!.since - lastRenewal <= TTL + 1);
  assert.equal(shared.lease!.term, 2);
  // The deposed router cannot fence a write, even once it reaches the store again.
  rs[0]!.store.cutOff = false;
  assert.equal(await rs[0]!.elector.fence(), null);
  assert.notEqual(await rs.find((r) => r.id === next)!.elector.fence(), null);
  await Promise.all(rs.map((r) => r.elector.stop()));
});

Deno.test("LeaderElector: stop() hands the lease over at the followers' next attempt", async () => {
  const clock = new ManualClock(0);
  const rs = routers(["a", "b"], clock);
  await Promise.all(rs.map((r) => r.elector.start()));
  await rs[0]!.elector.stop();
  assert.deepEqual(leaders(rs), []);
  await clock.advance(RENEW);
  assert.deepEqual(leaders(rs), ["b"]);
  await rs[1]!.elector.stop();
});

Deno.test("property: under random cut-offs at most one router leads, and a reachable one leads within TTL + renew", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({
          router: fc.integer({ min: 0, max: 2 }),
          cut: fc.boolean(),
          wait: fc.integer({ min: 500, max: 15_000 }),
        }),
        { minLength: 1, maxLength: 6 },
      ),
      async (steps) => {
        const clock = new ManualClock(0);
        const rs = routers(["a", "b", "c"], clock);
        await Promise.all(rs.map((r) => r.elector.start()));
        for (const { router, cut, wait } of steps) {
          rs[router]!.store.cutOff = cut;
          // Walk the wait in small steps, checking the invariant at each.
          for (let walked = 0; walked < wait; walked += 500) {
            await clock.advance(500);
            assert.ok(leaders(rs).length <= 1, `${leaders(rs)} at ${clock.now()}`);
          }
        }
        // Liveness: with every router reachable again, someone leads within TTL + renew.
        rs.forEach((r) => r.store.cutOff = false);
        await clock.advance(TTL + RENEW);
        assert.equal(leaders(rs).length, 1);
        await Promise.all(rs.map((r) => r.elector.stop()));
      },
    ),
    { numRuns: 10 },
  );
});

Deno.test("LeaderElector: a busy store at takeover is retried at once, not at the next attempt", async () => {
  const clock = new ManualClock(0);
  const shared = new MemoryLease();
  const rs = routers(["a", "b"], clock, shared);
  await Promise.all(rs.map((r) => r.elector.start()));
  rs[0]!.store.cutOff = true;
  // b's takeover attempt (at a's expiry) meets two "database is locked" reads.
  rs[1]!.store.busyReads = 2;
  await clock.advance(TTL + 500);
  assert.deepEqual(leaders(rs), ["b"]);
  assert.equal(rs[1]!.elector.status().lease?.holder, "b");
  assert.ok(rs[1]!.elector.renewalAgeMs()! < 1000);
  await Promise.all(rs.map((r) => r.elector.stop()));
});
