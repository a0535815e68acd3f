/** @module Per-backend series in in-memory KV: rounds add up per bucket, retention holds. */
import assert from "node:assert/strict";
import type { BackendLoad, PoolLoad } from "../../control/load/pool_load.ts";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { backendLoadOf } from "../../../tests/_support/router/pool_loads.ts";
import { BACKEND_PREFIX, BackendSeries } from "./backend_series.ts";

const T0 = 1_700_000_040_000; // a multiple of 60 000

function load(at: number, backends: Partial<BackendLoad>[]): PoolLoad {
  return {
    at,
    models: [],
    pool: {
      reporting: backends.length,
      balancedness: 1,
      utilisationBalancedness: 1,
      utilisationCv: 0,
    },
    backends: backends.map((fields) =>
      backendLoadOf({ id: "id", name: "backend-1", utilisation: 0.5, tokensPerS: 10, ...fields })
    ),
  };
}

Deno.test("BackendSeries adds rounds into their bucket and reads them back per backend", async () => {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const series = new BackendSeries(kv, {
    clock,
    logger: new MemoryLogger(),
    bucketMs: 60_000,
    retentionMs: 3_600_000,
    roundIntervalMs: 1000,
  });
  try {
    for (let s = 0; s < 3; s++) {
      series.recordRound(load(T0 + s * 1000, [
        { powerW: 100 },
        { name: "backend-2", tokensPerS: 20 },
        { name: "backend-3", stale: true },
      ]));
    }
    series.recordRound(load(T0 + 60_000, [{ tokensPerS: 40, utilisation: 1 }]));
    await series.settled();
    await clock.advance(61_000);
    assert.deepEqual(await series.backends(), ["backend-1", "backend-2"]);
    const read = await series.read(T0, T0 + 120_000);
    assert.deepEqual(read.buckets, [T0, T0 + 60_000]);
    assert.deepEqual(read.backends.get("backend-1"), [
      {
        tokens: 30,
        coveredMs: 3000,
        busyMs: 1500,
        energyJ: 300,
        poweredMs: 3000,
        poweredTokens: 30,
      },
      { tokens: 40, coveredMs: 1000, busyMs: 1000, energyJ: 0, poweredMs: 0, poweredTokens: 0 },
    ]);
    assert.deepEqual(read.backends.get("backend-2")![1], undefined);
    assert.equal(read.backends.get("backend-2")![0]!.tokens, 60);
  } finally {
    await series.close();
    kv.close();
  }
});

Deno.test("BackendSeries sweeps and never returns buckets past retention", async () => {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const series = new BackendSeries(kv, {
    clock,
    logger: new MemoryLogger(),
    bucketMs: 60_000,
    retentionMs: 120_000,
    roundIntervalMs: 1000,
  });
  try {
    series.recordRound(load(T0, [{}]));
    series.recordRound(load(T0 + 60_000, [{}]));
    await series.settled();
    await clock.advance(180_000); // now T0 + 3 min: oldest kept is T0 + 1 min
    const read = await series.read(T0, T0 + 240_000);
    assert.equal(read.buckets[0], T0 + 60_000);
    assert.equal(await series.sweep(), 1);
    const left: Deno.KvKey[] = [];
    for await (const entry of kv.list({ prefix: BACKEND_PREFIX })) left.push(entry.key);
    assert.deepEqual(left, [[...BACKEND_PREFIX, "backend-1", T0 + 60_000]]);
    assert.throws(
      () =>
        new BackendSeries(kv, {
          clock,
          logger: new MemoryLogger(),
          bucketMs: 0,
          retentionMs: 1,
          roundIntervalMs: 1,
        }),
      /traffic\.bucket must be a whole number/,
    );
  } finally {
    await series.close();
    kv.close();
  }
});
