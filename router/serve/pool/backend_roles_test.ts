/** @module Pool roles: standby and draining members are checked but take no new requests. */
import assert from "node:assert/strict";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { FakeBackend, FakeNetwork } from "../../../tests/_support/router/fake_backend.ts";
import { TEST_TOKEN } from "../../../tests/_support/router/harness.ts";
import { BackendPool } from "./backend_pool.ts";

function setUp() {
  const backends = [9001, 9002, 9003].map((port) =>
    new FakeBackend({
      id: `127.0.0.1:${port}`,
      internalToken: TEST_TOKEN,
      details: { models: ["tiny"] },
    })
  );
  const pool = new BackendPool([backends[0]!.url], {
    fetch: new FakeNetwork(backends).fetch,
    clock: new ManualClock(),
    logger: new MemoryLogger(),
    healthIntervalMs: 1000,
    healthTimeoutMs: 200,
    internalToken: TEST_TOKEN,
  });
  return { backends, pool };
}

const candidates = (pool: BackendPool) => pool.candidates("tiny").map((view) => view.id);

Deno.test("BackendPool: a standby member is checked and described but gets no requests until active", async () => {
  const { backends, pool } = setUp();
  await pool.start();
  assert.equal(pool.add(backends[1]!.url, { role: "standby" }), true);
  await pool.checkNow();
  const standby = pool.views()[1]!;
  assert.deepEqual([standby.role, standby.healthy, standby.models], ["standby", true, ["tiny"]]);
  assert.deepEqual(candidates(pool), ["127.0.0.1:9001"]);
  assert.equal(pool.setRole(backends[1]!.url, "active"), true);
  assert.deepEqual(candidates(pool), ["127.0.0.1:9001", "127.0.0.1:9002"]);
  // Draining: no new requests; its in-flight count stays visible until it is removed.
  const release = pool.acquire("127.0.0.1:9002");
  assert.equal(pool.setRole(backends[1]!.url, "draining"), true);
  assert.deepEqual(candidates(pool), ["127.0.0.1:9001"]);
  assert.equal(pool.views()[1]!.inFlight, 1);
  release();
  assert.equal(pool.views()[1]!.inFlight, 0);
  assert.equal(pool.setRole("http://127.0.0.1:9999", "active"), false);
  await pool.stop();
});

Deno.test("BackendPool.admitAs() sets the role of members added without one (discovery's)", async () => {
  const { backends, pool } = setUp();
  await pool.start();
  pool.admitAs(() => "standby");
  pool.add(backends[1]!.url);
  pool.add(backends[2]!.url, { role: "active" });
  pool.admitAs(undefined);
  await pool.checkNow(); // the round the first add() started
  await pool.checkNow();
  assert.deepEqual(pool.views().map((view) => view.role), ["active", "standby", "active"]);
  assert.deepEqual(candidates(pool), ["127.0.0.1:9001", "127.0.0.1:9003"]);
  await pool.stop();
});
