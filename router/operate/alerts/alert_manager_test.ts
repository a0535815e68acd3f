import assert from "node:assert/strict";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { oneSecondSample, poolLoadOf } from "../../../tests/_support/router/pool_loads.ts";
import { backendView } from "../../../tests/_support/router/views.ts";
import { AlertManager } from "./alert_manager.ts";
import { alertRoutes } from "./alert_routes.ts";
import { AlertStore } from "./alert_store.ts";
import { ZERO_TIME } from "./alertmanager_payload.ts";
import { WebhookV4Schema } from "../../../tests/_support/alertmanager_schema.ts";

const T0 = 1_700_000_000_000;
// A low balance threshold: these crafted loads test the hot-expert rule alone.
const SETTINGS = { expertLoadThreshold: 0.8, balanceThreshold: 0.1, raiseAfter: 2, clearAfter: 3 };
const VIEWS = [{ ...backendView("h:1"), name: "backend-1" }];
const HOT = poolLoadOf(oneSecondSample("h:1", [[17_000, 100, 100, 100], [100, 100, 100, 100]]));
const CALM = poolLoadOf(oneSecondSample("h:1", [[100, 100, 100, 100], [100, 100, 100, 100]]));

Deno.test("AlertManager fires, logs, stores and resolves a hot expert with hysteresis", async () => {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const logger = new MemoryLogger();
  const manager = new AlertManager({
    settings: SETTINGS,
    views: () => VIEWS,
    clock,
    logger,
    store: new AlertStore(kv, { logger }),
  });
  try {
    const round = async (load: typeof HOT) => {
      manager.onRound(load);
      await clock.advance(1000);
    };
    await round(HOT);
    assert.deepEqual(manager.active(), [], "one round is not enough");
    await round(HOT);
    assert.equal(manager.active().length, 1);
    const [alert] = manager.active();
    assert.equal(alert?.id, "expert_hot:tiny:L0/E0");
    assert.equal(alert?.firedAt, T0 + 1000);
    const fired = logger.find("alert firing");
    assert.equal(fired.length, 1);
    assert.equal(fired[0]?.level, "warn");
    assert.equal(fired[0]?.fields["event"], "alert");
    assert.equal(fired[0]?.fields["kind"], "expert_hot");

    await round(CALM);
    await round(HOT);
    await round(CALM);
    await round(CALM);
    assert.equal(manager.active().length, 1, "absent twice, clear_after is 3");
    await round(CALM);
    assert.deepEqual(manager.active(), []);
    const resolved = logger.find("alert resolved");
    assert.equal(resolved.length, 1);
    assert.equal(resolved[0]?.level, "info");
    assert.equal(resolved[0]?.fields["firing_ms"], 5000);
    assert.equal(logger.find("alert firing").length, 1, "never re-fired in between");
    assert.deepEqual(manager.counts, { fired: 1, resolved: 1 });

    assert.equal(manager.recent().length, 1);
    assert.equal(manager.recent()[0]?.state, "resolved");
    await manager.settled();
    const records = await new AlertStore(kv, { logger }).list();
    assert.equal(records.length, 1);
    assert.equal(records[0]?.state, "resolved");
    assert.equal(records[0]?.resolvedAt, T0 + 6000);

    const app = alertRoutes(manager);
    const body = await (await app.request("/api/alerts")).json();
    assert.deepEqual(body.active, []);
    assert.deepEqual(body.recent, [{
      id: "expert_hot:tiny:L0/E0",
      kind: "expert_hot",
      subject: "tiny L0/E0",
      state: "resolved",
      fired_at: T0 + 1000,
      resolved_at: T0 + 6000,
      value: 0.883,
      threshold: 0.8,
      message: records[0]!.message,
    }]);
  } finally {
    kv.close();
  }
});

Deno.test("AlertManager keeps at most recentLimit alerts, newest first, and survives a KV failure", async () => {
  const kv = await Deno.openKv(":memory:");
  kv.close(); // every write fails
  const clock = new ManualClock(T0);
  const logger = new MemoryLogger();
  let healthy = true;
  const manager = new AlertManager({
    settings: { ...SETTINGS, raiseAfter: 1, clearAfter: 1 },
    views: () => [{ ...VIEWS[0]!, healthy, lastError: "refused" }],
    clock,
    logger,
    store: new AlertStore(kv, { logger }),
    recentLimit: 3,
  });
  for (let i = 0; i < 5; i++) {
    healthy = i % 2 === 1;
    manager.onRound(CALM);
    await clock.advance(1000);
  }
  // Down at rounds 0, 2, 4: three firings, two resolved.
  assert.deepEqual(manager.recent().map((a) => [a.firedAt - T0, a.state]), [
    [4000, "firing"],
    [2000, "resolved"],
    [0, "resolved"],
  ]);
  assert.equal(manager.active()[0]?.kind, "backend_down");
  await manager.settled();
  assert.equal(logger.find("alert record not saved").length, 1, "logged once per streak");
});

Deno.test("AlertManager.resume() continues another router's firing alert: no second fire, one resolve", async () => {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const logger = new MemoryLogger();
  const options = { settings: SETTINGS, views: () => VIEWS, clock, logger };
  const store = new AlertStore(kv, { logger });
  const first = new AlertManager({ ...options, store });
  try {
    for (let i = 0; i < 2; i++) first.onRound(HOT);
    await first.settled();
    // The first leader dies; the next one reads the records and keeps evaluating.
    const next = new AlertManager({ ...options, store });
    next.resume(await store.list());
    assert.deepEqual(next.active().map((a) => a.id), ["expert_hot:tiny:L0/E0"]);
    next.onRound(HOT);
    assert.equal(next.counts.fired, 0, "still firing: not announced again");
    for (let i = 0; i < 3; i++) next.onRound(CALM);
    assert.deepEqual(next.counts, { fired: 0, resolved: 1 });
    assert.equal(next.recent()[0]?.state, "resolved");
    await next.settled();
  } finally {
    kv.close();
  }
});

Deno.test("AlertManager of a follower (announcing: false) tracks alerts silently", async () => {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const logger = new MemoryLogger();
  const store = new AlertStore(kv, { logger });
  let leading = false;
  const manager = new AlertManager({
    settings: SETTINGS,
    views: () => VIEWS,
    clock,
    logger,
    store,
    announcing: () => leading,
  });
  for (let i = 0; i < 2; i++) manager.onRound(HOT);
  await manager.settled();
  assert.equal(manager.active().length, 1, "shown on this router's dashboard");
  assert.deepEqual(manager.counts, { fired: 0, resolved: 0 });
  assert.equal(logger.find("alert firing").length, 0);
  assert.deepEqual(await store.list(), []);
  // Becoming leader with nothing recorded: the silent alert is announced at the next round.
  leading = true;
  manager.resume(await store.list());
  manager.onRound(HOT);
  await manager.settled();
  assert.equal(manager.counts.fired, 1);
  assert.equal((await store.list()).length, 1);
  kv.close();
});

Deno.test("Alertmanager format: one grouped POST per evaluation; a restart resolves what cleared while down", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const posts: Record<string, unknown>[] = [];
  const fetch = (_url: string | URL | Request, init?: RequestInit) => {
    posts.push(JSON.parse(String(init?.body)));
    return Promise.resolve(new Response(null, { status: 200 }));
  };
  const clock = new ManualClock(T0);
  const logger = new MemoryLogger();
  const make = (kv: Deno.Kv) =>
    new AlertManager({
      settings: SETTINGS,
      views: () => VIEWS,
      clock,
      logger,
      store: new AlertStore(kv, { logger }),
      webhook: { url: "http://receiver.test/hook", fetch, format: "alertmanager" },
      externalUrl: "http://localhost:8080/dashboard",
    });
  // One hot expert in each of four layers: four alerts in one evaluation.
  const allHot = poolLoadOf(oneSecondSample("h:1", [
    [17_000, 100, 100, 100],
    [100, 17_000, 100, 100],
    [100, 100, 17_000, 100],
    [100, 100, 100, 17_000],
  ]));
  let kv = await Deno.openKv(path);
  try {
    const first = make(kv);
    first.onRound(allHot);
    first.onRound(allHot);
    await first.settled();
    assert.equal(first.active().length, 4, "four experts fire in one evaluation");
    assert.equal(posts.length, 1, "one notification for the group, not four");
    const fired = WebhookV4Schema.parse(posts[0]);
    assert.equal(fired.status, "firing");
    assert.equal(fired.alerts.length, 4);
    // The router stops while they fire; the experts cool down meanwhile.
    kv.close();
    kv = await Deno.openKv(path);
    const next = make(kv);
    next.resume(await new AlertStore(kv, { logger }).list());
    for (let i = 0; i < SETTINGS.clearAfter; i++) {
      await clock.advance(1000);
      next.onRound(CALM);
    }
    await next.settled();
    assert.equal(posts.length, 2);
    const resolved = WebhookV4Schema.parse(posts[1]);
    assert.equal(resolved.status, "resolved");
    assert.equal(resolved.groupKey, fired.groupKey);
    assert.equal(resolved.alerts.length, 4);
    assert.ok(resolved.alerts.every((a) => a.status === "resolved" && a.endsAt !== ZERO_TIME));
    assert.deepEqual(
      resolved.alerts.map((a) => a.fingerprint),
      fired.alerts.map((a) => a.fingerprint),
      "the same alerts, by fingerprint",
    );
  } finally {
    kv.close();
    await Deno.remove(path);
  }
});
