/** @module Event routes through `app.request()`: auth, validation, create/list/get/delete, audit. */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { eventRoutes } from "./event_routes.ts";
import { EventStore, prewarmEventSource } from "./event_store.ts";
import { eventMixAt, eventMultiplier, eventsActiveAt, eventsInLeadAt } from "./scheduled_event.ts";

const ADMIN = "admin-token-0123456789";
const PROMO = {
  name: "promo",
  start: "2024-01-03T20:00:00Z",
  end: "2024-01-03T21:00:00+00:00",
  multiplier: 5,
  mix: { chat: 0.2, code: 0.7, summarise: 0.1 },
};

async function setup(token: string | null = ADMIN) {
  const adminToken = token ?? undefined;
  const kv = await Deno.openKv(":memory:");
  const logger = new MemoryLogger();
  const clock = new ManualClock(Date.UTC(2024, 0, 1));
  let n = 0;
  const store = new EventStore(kv, { randomSuffix: () => String(n++) });
  const app = new Hono().route(
    "/api/events",
    eventRoutes({
      store,
      adminToken,
      logger,
      clock,
      leadMs: () => 3_600_000,
      // As the pre-warm job judges it: more than 10× today's traffic needs more than the maximum.
      capacityProblem: (event) =>
        event.multiplier > 10
          ? "multiplier needs 12 backends, beyond prewarm.max_backends 8"
          : null,
    }),
  );
  const call = (method: string, path: string, body?: unknown, token: string | null = ADMIN) => {
    const headers = new Headers();
    if (token !== null) headers.set("authorization", `Bearer ${token}`);
    return app.request(path, {
      method,
      headers,
      ...(body === undefined
        ? {}
        : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
  };
  return { kv, logger, store, clock, call, [Symbol.dispose]: () => kv.close() };
}

Deno.test("POST /api/events needs the admin token: 403 unconfigured, 401 missing or wrong", async () => {
  {
    using f = await setup(null);
    assert.equal((await f.call("POST", "/api/events", PROMO)).status, 403);
  }
  using f = await setup();
  assert.equal((await f.call("POST", "/api/events", PROMO, null)).status, 401);
  assert.equal((await f.call("POST", "/api/events", PROMO, "wrong")).status, 401);
  assert.equal((await f.call("DELETE", "/api/events/x", undefined, null)).status, 401);
  assert.deepEqual(await f.store.list(), []);
});

Deno.test("POST /api/events answers 400 naming the field", async () => {
  using f = await setup();
  const cases: [unknown, RegExp][] = [
    [{ ...PROMO, end: PROMO.start }, /end: must be after start/],
    [{ ...PROMO, multiplier: 0 }, /multiplier:/],
    [{ ...PROMO, mix: { chat: 0.5, code: 0.2 } }, /mix: shares must sum to 1 \(±0.01\), got 0.7/],
    [{ ...PROMO, start: "tomorrow" }, /start:/],
    [{ ...PROMO, name: "" }, /name:/],
    [{ ...PROMO, lead_time: "soon" }, /lead_time:/],
    [{ ...PROMO, extra: 1 }, /body|extra/],
    ["{not json", /body is not valid JSON/],
  ];
  for (const [body, message] of cases) {
    const response = await f.call("POST", "/api/events", body);
    assert.equal(response.status, 400, JSON.stringify(body));
    const error = await response.json();
    assert.match(error.error, message);
    assert.equal(error.code, "bad_request");
  }
});

Deno.test("events are created, listed, read and deleted, each change audited", async () => {
  using f = await setup();
  const created = await f.call("POST", "/api/events", { ...PROMO, lead_time: "30m" });
  assert.equal(created.status, 201);
  const event = await created.json();
  assert.equal(event.start, "2024-01-03T20:00:00.000Z");
  assert.equal(event.lead_time_ms, 1_800_000);
  // lead_time is a minimum: the job's lead now (1 h) is longer, so capacity is asked at 19:00.
  assert.equal(event.prewarm_at, "2024-01-03T19:00:00.000Z");
  assert.deepEqual(event.mix, PROMO.mix);
  const plain = await (await f.call("POST", "/api/events", {
    name: "night batch",
    start: "2024-01-02T01:00:00Z",
    end: "2024-01-02T03:00:00Z",
    multiplier: 2,
  })).json();
  assert.equal(plain.lead_time_ms, null); // none set: the job's measured lead
  assert.equal(plain.prewarm_at, "2024-01-02T00:00:00.000Z"); // start − the lead now
  assert.equal(plain.mix, null);
  assert.equal((await f.call("GET", "/api/events", undefined, null)).status, 401);
  const list = await (await f.call("GET", "/api/events")).json();
  assert.deepEqual(list.events.map((e: { name: string }) => e.name), ["night batch", "promo"]);
  const one = await f.call("GET", `/api/events/${event.id}`);
  assert.deepEqual(await one.json(), event);
  assert.equal((await f.call("GET", "/api/events/nope")).status, 404);
  assert.equal((await f.call("DELETE", `/api/events/${event.id}`)).status, 200);
  assert.equal((await f.call("DELETE", `/api/events/${event.id}`)).status, 404);
  assert.deepEqual((await f.store.list()).map((e) => e.name), ["night batch"]);
  const audit = f.logger.find("admin action").map((r) => [r.fields["what"], r.fields["name"]]);
  assert.deepEqual(audit, [
    ["create event", "promo"],
    ["create event", "night batch"],
    ["delete event", "promo"],
  ]);
  assert.ok(!JSON.stringify(f.logger.records).includes(ADMIN));
});

Deno.test("bad events get a 4xx naming why: ended (400), overlapping (409), beyond the pool's maximum (422); a started one a warning", async () => {
  using f = await setup();
  const cases: [unknown, number, RegExp][] = [
    [
      { ...PROMO, start: "2023-12-31T20:00:00Z", end: "2023-12-31T21:00:00Z" },
      400,
      /^Cannot create event: end "2023-12-31T21:00:00Z" is in the past/,
    ],
    [
      { ...PROMO, start: "2024-01-04T20:00:00Z", end: "2024-01-04T21:00:00Z", multiplier: 50 },
      422,
      /^Cannot create event: multiplier needs 12 backends/,
    ],
  ];
  assert.equal((await f.call("POST", "/api/events", PROMO)).status, 201);
  cases.push([
    { ...PROMO, name: "second", start: "2024-01-03T20:30:00Z", end: "2024-01-03T23:00:00Z" },
    409,
    /^Cannot create event: it overlaps event "promo" \(id "[^"]+", 2024-01-03T20:00:00\.000Z to 2024-01-03T21:00:00\.000Z\)/,
  ]);
  for (const [body, status, message] of cases) {
    const response = await f.call("POST", "/api/events", body);
    assert.equal(response.status, status, JSON.stringify(body));
    assert.match((await response.json()).error, message);
  }
  // Another model's event may overlap; one right after promo (end == start) does not overlap.
  const other = { ...PROMO, name: "other model", model: "other-model" };
  assert.equal(
    (await f.call("POST", "/api/events", {
      ...other,
      model: undefined,
      start: "2024-01-03T21:00:00Z",
      end: "2024-01-03T22:00:00Z",
    })).status,
    201,
  );
  // An event already under way is accepted, with a warning that its deadline is gone.
  await f.clock.advance(Date.parse("2024-01-05T10:30:00Z") - f.clock.now());
  const started = await f.call("POST", "/api/events", {
    ...PROMO,
    name: "flash sale",
    start: "2024-01-05T10:00:00Z",
    end: "2024-01-05T12:00:00Z",
  });
  assert.equal(started.status, 201);
  assert.match((await started.json()).warning, /start "2024-01-05T10:00:00Z" has passed/);
  assert.deepEqual((await f.store.list()).map((e) => e.name).sort(), [
    "flash sale",
    "other model",
    "promo",
  ]);
});

Deno.test("eventsActiveAt() and friends use [start, end) and multiply overlapping events", async () => {
  using f = await setup();
  await f.call("POST", "/api/events", PROMO);
  // Overlapping events are refused by the API; stored ones (older routers) still multiply.
  await f.store.create({
    id: "model-only",
    name: "model-only",
    startMs: Date.parse("2024-01-03T20:30:00Z"),
    endMs: Date.parse("2024-01-03T22:00:00Z"),
    multiplier: 2,
    model: "other",
    createdAt: 0,
  });
  const events = await f.store.list();
  const at = (iso: string) => Date.parse(iso);
  assert.deepEqual(eventsActiveAt(events, at("2024-01-03T19:59:59Z")), []);
  assert.equal(eventsActiveAt(events, at("2024-01-03T20:00:00Z"))[0]!.name, "promo");
  assert.deepEqual(eventsActiveAt(events, at("2024-01-03T21:00:00Z"), "m"), []);
  assert.equal(eventMultiplier(events, at("2024-01-03T20:45:00Z"), "other"), 10);
  assert.equal(eventMultiplier(events, at("2024-01-03T20:45:00Z"), "m"), 5);
  assert.deepEqual(eventMixAt(events, at("2024-01-03T20:10:00Z"), "m"), PROMO.mix);
  assert.equal(
    eventsInLeadAt(events, at("2024-01-03T19:10:00Z"), "m", 3_600_000)[0]!.name,
    "promo",
  );
  assert.deepEqual(eventsInLeadAt(events, at("2024-01-03T18:59:00Z"), "m", 3_600_000), []);
  const upcoming = await prewarmEventSource(f.store).upcoming(at("2024-01-03T21:30:00Z"));
  assert.deepEqual(upcoming.map((e) => [e.name, e.multiplier]), [["model-only", 2]]);
});
