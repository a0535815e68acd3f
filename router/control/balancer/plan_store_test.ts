/** @module PlanStore against in-memory and file-backed Deno KV. */
import assert from "node:assert/strict";
import { type PlacementPlan, staticPlan } from "../../../shared/placement_plan.ts";
import { PlanStore } from "./plan_store.ts";

const backends = [
  { id: "127.0.0.1:9001", url: "http://127.0.0.1:9001" },
  { id: "127.0.0.1:9002", url: "http://127.0.0.1:9002" },
];

function plan(version: number, model = "m"): PlacementPlan {
  return {
    ...staticPlan({ model, layers: 2, experts: 4, backends, version, now: 1000 + version }),
    reason: `plan ${version}`,
  };
}

async function withStore(test: (store: PlanStore, kv: Deno.Kv) => Promise<void>): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  try {
    await test(new PlanStore(kv), kv);
  } finally {
    kv.close();
  }
}

Deno.test("PlanStore.nextVersion() hands out increasing versions per model, also concurrently", () =>
  withStore(async (store) => {
    assert.equal(await store.nextVersion("m"), 1);
    assert.equal(await store.nextVersion("m"), 2);
    assert.equal(await store.nextVersion("other"), 1);
    const many = await Promise.all(Array.from({ length: 10 }, () => store.nextVersion("m")));
    assert.deepEqual([...many].sort((a, b) => a - b), [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  }));

Deno.test("PlanStore saves, reads and switches the current plan", () =>
  withStore(async (store) => {
    assert.equal(await store.current("m"), null);
    assert.equal(await store.get("m", 1), null);
    await store.save(plan(1));
    assert.deepEqual(await store.get("m", 1), plan(1));
    assert.equal(await store.current("m"), null);
    assert.equal(await store.setCurrent("m", 1, null), true);
    assert.deepEqual(await store.current("m"), plan(1));
    assert.equal(await store.currentVersion("m"), 1);
    await assert.rejects(() => store.setCurrent("m", 7, 1), /model "m" has no version 7/);
  }));

Deno.test("PlanStore.setCurrent() returns false when the current version moved (two routers)", () =>
  withStore(async (store) => {
    for (const v of [1, 2, 3]) await store.save(plan(v));
    assert.equal(await store.setCurrent("m", 1, null), true);
    // Both routers read version 1 and try to switch; only the first wins.
    assert.equal(await store.setCurrent("m", 2, 1), true);
    assert.equal(await store.setCurrent("m", 3, 1), false);
    assert.equal(await store.currentVersion("m"), 2);
    const racing = await Promise.all([store.setCurrent("m", 3, 2), store.setCurrent("m", 1, 2)]);
    assert.deepEqual(racing.filter(Boolean).length, 1);
  }));

Deno.test("PlanStore.setCurrent() checks the pin when asked", () =>
  withStore(async (store) => {
    for (const v of [1, 2]) await store.save(plan(v));
    await store.setCurrent("m", 1, null);
    await store.pin("m", 1);
    assert.equal(await store.setCurrent("m", 2, 1, { expectedPinned: null }), false);
    assert.equal(await store.currentVersion("m"), 1);
    assert.equal(await store.setCurrent("m", 2, 1, { expectedPinned: 1 }), true);
  }));

Deno.test("PlanStore pins and unpins", () =>
  withStore(async (store) => {
    await store.save(plan(1));
    assert.equal(await store.pinned("m"), null);
    await store.pin("m", 1);
    assert.equal(await store.pinned("m"), 1);
    await assert.rejects(() => store.pin("m", 9), /Cannot pin plan: model "m" has no version 9/);
    assert.equal(await store.unpin("m"), 1);
    assert.equal(await store.pinned("m"), null);
    assert.equal(await store.unpin("m"), null);
  }));

Deno.test("PlanStore.history() lists plans newest first, without the meta keys", () =>
  withStore(async (store) => {
    for (const v of [1, 2, 3, 10]) await store.save(plan(v));
    await store.save(plan(1, "other"));
    await store.setCurrent("m", 3, null);
    await store.nextVersion("m");
    await store.pin("m", 3);
    assert.deepEqual((await store.history("m")).map((p) => p.version), [10, 3, 2, 1]);
    assert.deepEqual((await store.history("m", 2)).map((p) => p.version), [10, 3]);
    assert.deepEqual((await store.history("other")).map((p) => p.version), [1]);
    await assert.rejects(() => store.history("m", 0), RangeError);
  }));

Deno.test("a restarted router continues with the plan in a file-backed KV", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/plans.kv`;
  try {
    const first = await Deno.openKv(path);
    const before = new PlanStore(first);
    const version = await before.nextVersion("m");
    await before.save(plan(version));
    await before.setCurrent("m", version, null);
    await before.pin("m", version);
    first.close();

    const second = await Deno.openKv(path);
    try {
      const after = new PlanStore(second);
      assert.deepEqual(await after.current("m"), plan(1));
      assert.equal(await after.pinned("m"), 1);
      assert.equal(await after.nextVersion("m"), 2);
    } finally {
      second.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("PlanStore with a fence: a switch needs the lease as read and records its term", async () => {
  const kv = await Deno.openKv(":memory:");
  const lease: Deno.KvKey = ["leader", "lease"];
  await kv.set(lease, { holder: "router-a", term: 3 });
  let leading = true;
  const fence = async () => {
    if (!leading) return null;
    const entry = await kv.get(lease);
    return { check: { key: lease, versionstamp: entry.versionstamp }, term: 3, holder: "router-a" };
  };
  const store = new PlanStore(kv, { fence });
  await store.save(plan(1));
  await store.save(plan(2));
  assert.equal(await store.setCurrent("m", 1, null), true);
  assert.deepEqual(await store.term("m"), { term: 3, holder: "router-a", version: 1 });
  // Deposed: the fence says no, and a stale check (the lease moved) fails the commit too.
  leading = false;
  assert.equal(await store.setCurrent("m", 2, 1), false);
  leading = true;
  const stale = await fence();
  await kv.set(lease, { holder: "router-b", term: 4 });
  const staleStore = new PlanStore(kv, { fence: () => Promise.resolve(stale) });
  assert.equal(await staleStore.setCurrent("m", 2, 1), false);
  assert.equal(await store.currentVersion("m"), 1);
  kv.close();
});
