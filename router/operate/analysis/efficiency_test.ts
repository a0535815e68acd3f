/** @module Efficiency: round contributions, energy integration and tokens per joule. */
import assert from "node:assert/strict";
import type { BackendLoad } from "../../control/load/pool_load.ts";
import { addBackendBuckets, type BackendBucket, roundContribution } from "./backend_bucket.ts";
import { efficiency } from "./efficiency.ts";
import { backendLoadOf } from "../../../tests/_support/router/pool_loads.ts";

function backend(fields: Partial<BackendLoad>): BackendLoad {
  return backendLoadOf({
    id: "127.0.0.1:9001",
    name: "backend-1",
    reportAgeMs: 10,
    utilisation: 0.5,
    tokensPerS: 100,
    requestsPerS: 10,
    cpuCores: 1,
    netRxBytesPerS: 0,
    netTxBytesPerS: 0,
    ...fields,
  });
}

function rounds(load: BackendLoad, count: number, roundMs = 1000): BackendBucket {
  let bucket: BackendBucket | null = null;
  for (let i = 0; i < count; i++) {
    bucket = addBackendBuckets(bucket, roundContribution(load, roundMs)!);
  }
  return bucket!;
}

Deno.test("energy integrates power over the rounds: 200 W × 10 s = 2000 J, 0.5 tokens/J", () => {
  const bucket = rounds(backend({ powerW: 200, tokensPerS: 100, utilisation: 0.25 }), 10);
  assert.deepEqual(bucket, {
    tokens: 1000,
    coveredMs: 10_000,
    busyMs: 2500,
    energyJ: 2000,
    poweredMs: 10_000,
    poweredTokens: 1000,
  });
  const result = efficiency(new Map([["backend-1", [bucket]]]), 1);
  assert.deepEqual(result.powerReadOn, ["backend-1"]);
  assert.equal(result.pool.tokensPerJoule[0], 0.5);
  assert.equal(result.pool.powerW[0], 200);
  assert.equal(result.pool.tokensPerS[0], 100);
  assert.equal(result.pool.utilisation[0], 0.25);
  assert.deepEqual(result.pool.totals, {
    tokens: 1000,
    tokensPerS: 100,
    utilisation: 0.25,
    energyJ: 2000,
    tokensPerJoule: 0.5,
  });
});

Deno.test("without power readings tokens per joule is null, never estimated", () => {
  const bucket = rounds(backend({ powerW: null }), 5);
  assert.equal(bucket.energyJ, 0);
  const result = efficiency(new Map([["backend-1", [bucket, undefined]]]), 2);
  assert.deepEqual(result.powerReadOn, []);
  assert.deepEqual(result.pool.tokensPerJoule, [null, null]);
  assert.equal(result.pool.totals.tokensPerJoule, null);
  assert.equal(result.pool.totals.energyJ, null);
  assert.deepEqual(result.pool.tokensPerS, [100, null]);
  assert.deepEqual(result.backends[0]!.series.utilisation, [0.5, null]);
});

Deno.test("stale backends and backends without rates contribute nothing", () => {
  assert.equal(roundContribution(backend({ stale: true }), 1000), null);
  assert.equal(roundContribution(backend({ tokensPerS: undefined }), 1000), null);
});

Deno.test("the pool sums backend rates; tokens per joule uses only rounds with power", () => {
  // backend-1: 100 tok/s at 200 W for 4 s; then 4 s without a power reading.
  const b1 = addBackendBuckets(
    rounds(backend({ powerW: 200 }), 4),
    rounds(backend({ powerW: null }), 4),
  );
  // backend-2: 50 tok/s, no power, measured only 2 s of the bucket.
  const b2 = rounds(backend({ name: "backend-2", tokensPerS: 50, utilisation: 1 }), 2);
  const result = efficiency(new Map([["backend-2", [b2]], ["backend-1", [b1]]]), 1);
  assert.deepEqual(result.backends.map((b) => b.backend), ["backend-1", "backend-2"]);
  assert.deepEqual(result.powerReadOn, ["backend-1"]);
  assert.equal(result.pool.tokensPerS[0], 150);
  assert.equal(result.pool.totals.tokensPerS, 150);
  // Busy: 0.5 × 8000 + 1 × 2000 = 6000 ms of 10 000 measured.
  assert.equal(result.pool.utilisation[0], 0.6);
  assert.equal(result.pool.tokensPerJoule[0], 400 / 800);
  assert.equal(result.backends[1]!.series.tokensPerJoule[0], null);
  assert.equal(result.backends[0]!.series.powerW[0], 200);
});
