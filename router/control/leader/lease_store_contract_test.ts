/** Every LeaseStore: check-and-set against the version read, and the check that fences. */
import assert from "node:assert/strict";
import { MemoryLeaseStore } from "../../../tests/_support/router/memory_lease_store.ts";
import type { Lease } from "./lease.ts";
import { KvLeaseStore, type LeaseStore } from "./lease_store.ts";

const STORES: Record<string, () => Promise<{ store: LeaseStore; close(): void }>> = {
  memory: () => Promise.resolve({ store: new MemoryLeaseStore(), close() {} }),
  kv: async () => {
    const kv = await Deno.openKv(":memory:");
    return { store: new KvLeaseStore(kv), close: () => kv.close() };
  },
};

const lease = (holder: string, term: number): Lease => ({
  holder,
  term,
  expiresAt: 10_000 * term,
  since: 0,
});

for (const [name, open] of Object.entries(STORES)) {
  Deno.test(`${name} LeaseStore: only a writer holding the version it read wins`, async () => {
    const { store, close } = await open();
    try {
      const empty = await store.read();
      assert.equal(empty.lease, null);
      assert.equal(empty.version, null);
      assert.equal(await store.compareAndSet(empty, lease("a", 1)), true);
      // A second writer that read the empty record loses.
      assert.equal(await store.compareAndSet(empty, lease("b", 1)), false);
      const read = await store.read();
      assert.deepEqual(read.lease, lease("a", 1));
      assert.equal(await store.compareAndSet(read, lease("a", 2)), true);
      assert.equal(await store.compareAndSet(read, lease("b", 2)), false);
      assert.deepEqual((await store.read()).lease, lease("a", 2));
      assert.deepEqual(store.check(read).key, ["leader", "lease"]);
    } finally {
      close();
    }
  });
}

Deno.test("KvLeaseStore: the fence check fails a write once the lease moved; takeovers are logged", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = new KvLeaseStore(kv);
    await store.compareAndSet(await store.read(), lease("a", 1));
    const asLeader = await store.read();
    const fenced = () => kv.atomic().check(store.check(asLeader)).set(["plan"], 1).commit();
    assert.equal((await fenced()).ok, true);
    await store.compareAndSet(asLeader, { ...lease("b", 2), since: 12_000 });
    assert.equal((await fenced()).ok, false);
    assert.deepEqual(await store.terms(), [
      { term: 1, holder: "a", since: 0, previousExpiresAt: null, previousHolder: null },
      { term: 2, holder: "b", since: 12_000, previousExpiresAt: 10_000, previousHolder: "a" },
    ]);
  } finally {
    kv.close();
  }
});
