import assert from "node:assert/strict";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import {
  FakeBackend,
  type FakeBackendOptions,
  FakeNetwork,
} from "../../../tests/_support/router/fake_backend.ts";
import { TEST_TOKEN } from "../../../tests/_support/router/harness.ts";
import { BackendPool, type BackendPoolOptions } from "./backend_pool.ts";

/** Fake backends on one network; the first `members` (default all) are the pool's. */
function setUp(
  backendOptions: Array<Partial<FakeBackendOptions>>,
  poolOptions: Partial<BackendPoolOptions> = {},
  members = backendOptions.length,
) {
  const backends = backendOptions.map((options, i) =>
    new FakeBackend({ id: `127.0.0.1:${9001 + i}`, internalToken: TEST_TOKEN, ...options })
  );
  const network = new FakeNetwork(backends);
  const clock = new ManualClock();
  const logger = new MemoryLogger();
  const pool = new BackendPool(backends.slice(0, members).map((backend) => `${backend.url}/`), {
    fetch: network.fetch,
    clock,
    logger,
    healthIntervalMs: 1000,
    healthTimeoutMs: 200,
    internalToken: TEST_TOKEN,
    ...poolOptions,
  });
  return { backends, clock, logger, pool };
}

Deno.test("BackendPool.start() marks passing backends up, failing ones down, and logs both", async () => {
  const { backends, pool, logger } = setUp([{}, {}]);
  backends[1]!.mode = "unready";
  await pool.start();
  const [a, b] = pool.views();
  assert.equal(a!.url, "http://127.0.0.1:9001");
  assert.equal(a!.healthy, true);
  assert.deepEqual(a!.details, { backend_id: "127.0.0.1:9001", execution_provider: "cpu" });
  assert.equal(b!.healthy, false);
  assert.equal(b!.lastError, "ready check answered 503");
  assert.deepEqual(b!.details, { backend_id: "127.0.0.1:9002", execution_provider: "cpu" });
  assert.equal(pool.healthyCount(), 1);
  assert.deepEqual(logger.find("backend up").map((r) => r.fields["backend"]), ["127.0.0.1:9001"]);
  assert.deepEqual(logger.find("backend down").map((r) => r.fields["backend"]), ["127.0.0.1:9002"]);
  await pool.stop();
});

Deno.test("BackendPool sends the internal token to backends and never logs it", async () => {
  const { backends, pool, logger } = setUp([{ details: { models: ["tiny"] } }]);
  await pool.start();
  const paths = backends[0]!.received.map((request) => request.path);
  assert.deepEqual(paths, ["/v2/health/ready", "/v2/models/tiny"]);
  for (const request of backends[0]!.received) {
    assert.equal(request.headers.get("authorization"), `Bearer ${TEST_TOKEN}`);
  }
  backends[0]!.mode = "refuse";
  await pool.checkNow();
  assert.ok(!JSON.stringify(logger.records).includes(TEST_TOKEN));
  await pool.stop();
});

Deno.test("BackendPool treats a backend rejecting the token as unhealthy", async () => {
  const { pool } = setUp([{}], { internalToken: "some-other-token-123456" });
  await pool.start();
  assert.equal(pool.views()[0]!.lastError, "ready check answered 401");
  await pool.stop();
});

Deno.test("BackendPool fetches announced models when a backend comes up and builds the catalog", async () => {
  const { pool } = setUp([{ details: { models: ["tiny"] } }, {
    model: "wide",
    dModel: 8,
    details: { model: "wide" },
  }]);
  await pool.start();
  const catalog = pool.catalog();
  assert.deepEqual([...catalog.keys()].sort(), ["tiny", "wide"]);
  assert.equal(catalog.get("tiny")!.dModel, 4);
  assert.equal(catalog.get("wide")!.dModel, 8);
  assert.deepEqual(catalog.get("wide")!.metadata.parameters, {
    d_model: 8,
    layers: 2,
    experts: 4,
    top_k: 2,
  });
  assert.deepEqual(pool.candidates("tiny").map((b) => b.id), ["127.0.0.1:9001"]);
  assert.deepEqual(pool.candidates("wide").map((b) => b.id), ["127.0.0.1:9002"]);
  await pool.stop();
});

Deno.test("BackendPool.discoverModel() asks healthy backends and remembers a miss for one interval", async () => {
  const { backends, pool, clock } = setUp([{}, {}]);
  await pool.start();
  assert.equal(pool.model("tiny"), undefined);
  const [first, second] = await Promise.all([
    pool.discoverModel("tiny"),
    pool.discoverModel("tiny"),
  ]);
  assert.equal(first!.dModel, 4);
  assert.equal(second, first);
  const asked = () =>
    backends.flatMap((b) => b.received).filter((r) => r.path.startsWith("/v2/models/")).length;
  assert.equal(asked(), 2, "concurrent discoveries share one lookup per backend");
  assert.equal(pool.candidates("tiny").length, 2);

  assert.equal(await pool.discoverModel("ghost"), undefined);
  const afterMiss = asked();
  assert.equal(await pool.discoverModel("ghost"), undefined);
  assert.equal(asked(), afterMiss, "a remembered miss costs no backend call");
  await clock.advance(1001);
  const afterInterval = asked();
  await pool.discoverModel("ghost");
  assert.ok(asked() > afterInterval, "the miss expires after one interval");

  const beforeBad = asked();
  assert.equal(await pool.discoverModel("../etc/passwd"), undefined);
  assert.equal(asked(), beforeBad, "names that cannot be models are never sent to backends");
  await pool.stop();
});

Deno.test("BackendPool asks a backend that comes up later about models already known", async () => {
  const { backends, pool, clock } = setUp([{}, {}]);
  backends[1]!.mode = "unready";
  await pool.start();
  await pool.discoverModel("tiny");
  assert.deepEqual(pool.candidates("tiny").map((b) => b.id), ["127.0.0.1:9001"]);
  backends[1]!.mode = "ok";
  await clock.advance(1000);
  assert.deepEqual(pool.candidates("tiny").map((b) => b.id), ["127.0.0.1:9001", "127.0.0.1:9002"]);
  await pool.stop();
});

Deno.test("BackendPool ejects a hanging backend after consecutive probe timeouts, not one", async () => {
  const { backends, pool, clock, logger } = setUp([{}]);
  await pool.start();
  backends[0]!.mode = "hang";
  await clock.advance(1000);
  assert.equal(pool.views()[0]!.healthy, true, "still up while the check is pending");
  await clock.advance(200);
  assert.equal(pool.views()[0]!.healthy, true, "one late probe is not an ejection");
  assert.equal(pool.views()[0]!.lastError, "timed out after 200 ms");
  // Two more rounds (interval 1000 ms after each 200 ms timeout): the third ejects.
  await clock.advance(2400);
  assert.equal(pool.views()[0]!.healthy, false);
  assert.equal(logger.find("backend down")[0]?.fields["ejected"], "probe_timeout");
  assert.equal(pool.outlier.ejections().get("probe_timeout"), 1);
  await pool.stop();
});

Deno.test("BackendPool does not count a probe timeout the router's own lag explains", async () => {
  let lag = 500;
  const { backends, pool, clock } = setUp([{}], { lagSince: () => lag });
  await pool.start();
  backends[0]!.mode = "hang";
  await clock.advance(3600);
  assert.equal(pool.views()[0]!.healthy, true, "three late probes while the router lagged");
  assert.equal(pool.outlier.excused, 3);
  lag = 0;
  await clock.advance(3600);
  assert.equal(pool.views()[0]!.healthy, false);
  await pool.stop();
});

Deno.test("BackendPool ejects on consecutive traffic failures, aborts requests in flight, re-admits after passing checks", async () => {
  const { pool, clock, logger } = setUp([{ details: { models: ["tiny"] } }, {
    details: { models: ["tiny"] },
  }]);
  await pool.start();
  const inFlight = pool.ejectionSignal("127.0.0.1:9001");
  pool.reportFailure("127.0.0.1:9001", "connection", "forwarding failed: connection reset");
  pool.reportSuccess("127.0.0.1:9001");
  pool.reportFailure("127.0.0.1:9001", "connection", "forwarding failed: connection reset");
  pool.reportFailure("127.0.0.1:9001", "timeout", "forwarding timed out");
  assert.equal(inFlight.aborted, false, "a success in between reset the count");
  assert.deepEqual(pool.candidates("tiny").map((b) => b.id), ["127.0.0.1:9001", "127.0.0.1:9002"]);
  pool.reportFailure("127.0.0.1:9001", "server_error", "answered 500");
  assert.equal(inFlight.aborted, true, "ejection aborts requests in flight to it");
  assert.deepEqual(pool.candidates("tiny").map((b) => b.id), ["127.0.0.1:9002"]);
  assert.equal(logger.find("backend down")[0]?.fields["reason"], "answered 500");
  assert.equal(pool.ejectionSignal("127.0.0.1:9001").aborted, false, "a fresh signal after");
  // Next round: one passing check is not enough; the recheck 250 ms later re-admits.
  await clock.advance(1000);
  assert.deepEqual(pool.candidates("tiny").map((b) => b.id), ["127.0.0.1:9002"]);
  assert.equal(pool.views()[0]!.lastError, "re-admission: 1 of 2 passing checks");
  await clock.advance(250);
  assert.deepEqual(pool.candidates("tiny").map((b) => b.id), ["127.0.0.1:9001", "127.0.0.1:9002"]);
  // A backend discovery removed meanwhile: nothing to mark, nothing thrown.
  pool.reportFailure("10.9.9.9:1", "connection", "x");
  await pool.stop();
});

Deno.test("BackendPool panic: with most backends ejected, the slow ones are candidates again, the dead not", async () => {
  const { backends, pool } = setUp([
    { details: { models: ["tiny"] } },
    { details: { models: ["tiny"] } },
    { details: { models: ["tiny"] } },
  ], { outlier: { ejectAfter: 1, readmitAfter: 2, panicThreshold: 0.5, lagAllowanceMs: 200 } });
  await pool.start();
  pool.reportFailure("127.0.0.1:9001", "connection", "refused");
  assert.equal(pool.panic(), false, "2 of 3 in rotation");
  assert.deepEqual(pool.candidates("tiny").map((b) => b.id), ["127.0.0.1:9002", "127.0.0.1:9003"]);
  pool.reportFailure("127.0.0.1:9002", "timeout", "slow");
  assert.equal(pool.panic(), true, "1 of 3 in rotation");
  assert.deepEqual(pool.candidates("tiny").map((b) => b.id), ["127.0.0.1:9002", "127.0.0.1:9003"]);
  pool.reportFailure("127.0.0.1:9003", "server_error", "answered 500");
  assert.deepEqual(pool.candidates("tiny").map((b) => b.id), ["127.0.0.1:9002", "127.0.0.1:9003"]);
  // A backend that says it is not ready stays out even in panic.
  backends[1]!.mode = "unready";
  await pool.checkNow();
  assert.deepEqual(pool.candidates("tiny").map((b) => b.id), ["127.0.0.1:9003"]);
  await pool.stop();
});

Deno.test("BackendPool.remove() drops a member; work already forwarded to it finishes", async () => {
  const { pool, logger } = setUp([{ details: { models: ["tiny"] } }, {
    details: { models: ["tiny"] },
  }]);
  await pool.start();
  const release = pool.acquire("127.0.0.1:9001");
  assert.equal(pool.remove("http://127.0.0.1:9001/"), true);
  assert.equal(pool.remove("http://127.0.0.1:9001"), false);
  assert.deepEqual(pool.urls(), ["http://127.0.0.1:9002"]);
  assert.deepEqual(pool.candidates("tiny").map((b) => b.id), ["127.0.0.1:9002"]);
  assert.equal(logger.find("backend removed")[0]?.fields["in_flight"], 1);
  release();
  await pool.stop();
});

Deno.test("BackendPool.acquire() counts in-flight work and releases exactly once", async () => {
  const { pool } = setUp([{}]);
  await pool.start();
  const releaseA = pool.acquire("127.0.0.1:9001");
  const releaseB = pool.acquire("127.0.0.1:9001");
  assert.equal(pool.views()[0]!.inFlight, 2);
  releaseA();
  releaseA();
  assert.equal(pool.views()[0]!.inFlight, 1);
  releaseB();
  assert.equal(pool.views()[0]!.inFlight, 0);
  await pool.stop();
});

Deno.test("BackendPool excludes a backend whose d_model disagrees with the catalog", async () => {
  const { pool, logger } = setUp([
    { details: { models: ["tiny"] } },
    { dModel: 8, details: { models: ["tiny"] } },
  ]);
  await pool.start();
  assert.equal(pool.model("tiny")!.dModel, 4);
  assert.deepEqual(pool.candidates("tiny").map((b) => b.id), ["127.0.0.1:9001"]);
  assert.equal(logger.find("model metadata unavailable").length, 0);
  await pool.stop();
});

Deno.test("BackendPool.stop() cancels the schedule: no timers left, no more checks", async () => {
  const { backends, pool, clock } = setUp([{}]);
  await pool.start();
  assert.equal(clock.pendingTimers, 1);
  await pool.stop();
  assert.equal(clock.pendingTimers, 0);
  const before = backends[0]!.received.length;
  await clock.advance(10_000);
  assert.equal(backends[0]!.received.length, before);
});

Deno.test("BackendPool rounds do not overlap and keep running after failures", async () => {
  const { backends, pool, clock } = setUp([{}]);
  await pool.start();
  const readyChecks = () =>
    backends[0]!.received.filter((r) => r.path === "/v2/health/ready").length;
  await Promise.all([pool.checkNow(), pool.checkNow()]);
  assert.equal(readyChecks(), 2, "two concurrent checkNow() calls share one round");
  backends[0]!.mode = "explode";
  await clock.advance(1000);
  assert.match(pool.views()[0]!.lastError ?? "", /network stack exploded/);
  backends[0]!.mode = "ok";
  await clock.advance(1000);
  assert.equal(pool.views()[0]!.healthy, true);
  await pool.stop();
});

Deno.test("BackendPool ignores a duplicate backend URL", () => {
  const logger = new MemoryLogger();
  const pool = new BackendPool(["http://127.0.0.1:9001", "http://127.0.0.1:9001/"], {
    fetch: () => Promise.reject(new TypeError("unused")),
    clock: new ManualClock(),
    logger,
    healthIntervalMs: 1000,
    healthTimeoutMs: 100,
  });
  assert.equal(pool.views().length, 1);
  assert.equal(logger.find("duplicate backend ignored").length, 1);
});

Deno.test("BackendPool.add() makes a started backend a member that joins once its check passes", async () => {
  const { backends, logger, pool } = setUp([{}, { id: "127.0.0.1:9005" }], {}, 1);
  const extra = backends[1]!;
  await pool.start();
  assert.equal(pool.add(`${extra.url}/`), true);
  assert.equal(pool.add(extra.url), false);
  await pool.checkNow();
  assert.deepEqual(pool.views().map((view) => [view.id, view.healthy]), [
    ["127.0.0.1:9001", true],
    ["127.0.0.1:9005", true],
  ]);
  assert.equal(logger.find("backend added")[0]!.fields["backend"], "127.0.0.1:9005");
  await pool.stop();
});

Deno.test("BackendPool.model() answers what the catalog does: healthy backends first", async () => {
  const { backends, pool } = setUp([
    { details: { models: ["tiny"] } },
    { model: "tiny", dModel: 8, details: { models: ["tiny"] } },
  ]);
  await pool.start();
  assert.equal(pool.model("tiny")!.dModel, 4);
  backends[0]!.mode = "refuse";
  for (let i = 0; i < 10 && pool.healthyCount() > 1; i++) await pool.checkNow();
  assert.equal(pool.healthyCount(), 1);
  assert.equal(pool.model("tiny"), pool.catalog().get("tiny"));
  assert.equal(pool.model("tiny")!.dModel, 8);
  assert.equal(pool.model("none"), undefined);
  await pool.stop();
});
