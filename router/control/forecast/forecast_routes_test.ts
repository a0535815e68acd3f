/** @module The forecast service and `GET /api/forecast` on in-memory KV: events, 400s, 404s. */
import assert from "node:assert/strict";
import { EventStore } from "../events/event_store.ts";
import type { ScheduledEvent } from "../events/scheduled_event.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { emptyModelBucket } from "../traffic/bucket_traffic.ts";
import { TrafficStore } from "../traffic/traffic_store.ts";
import { forecastRoutes } from "./forecast_routes.ts";
import { ForecastService } from "./forecast_service.ts";

const MIN = 60_000;
const T0 = 1_700_000_040_000;

function event(id: string, fromMin: number, toMin: number, extra: Partial<ScheduledEvent> = {}) {
  return {
    id,
    name: id,
    startMs: T0 + fromMin * MIN,
    endMs: T0 + toMin * MIN,
    multiplier: 5,
    leadTimeMs: 0,
    createdAt: T0,
    ...extra,
  } satisfies ScheduledEvent;
}

/** 120 one-minute buckets of 10 requests (6 chat, 4 code); ×5 during a past event at 100–104. */
async function setup() {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(T0);
  const traffic = new TrafficStore(kv, { clock, bucketMs: MIN });
  for (let i = 0; i < 120; i++) {
    const k = i >= 100 && i < 105 ? 5 : 1;
    const bucket = emptyModelBucket();
    bucket.volume = {
      requests: 10 * k,
      tokens: 20 * k,
      types: {
        chat: { requests: 6 * k, tokens: 12 * k },
        code: { requests: 4 * k, tokens: 8 * k },
      },
    };
    await traffic.write("m", T0 + i * MIN, bucket);
  }
  await clock.advance(120 * MIN + 30_000); // in bucket 120, still open
  const events = new EventStore(kv);
  await events.create(event("past", 100, 105));
  await events.create(event("promo", 123, 126, { mix: { chat: 0.2, code: 0.8 } }));
  const forecasts = new ForecastService({ traffic, events, clock });
  const app = forecastRoutes({ forecasts, traffic, defaultHorizonMs: 15 * MIN });
  return { kv, forecasts, app, [Symbol.dispose]: () => kv.close() };
}

Deno.test("forecasts multiply volume inside an event and ignore a past one", async () => {
  using f = await setup();
  const total = await f.forecasts.forecast({ kind: "requests", model: "m" }, 8);
  assert.ok(total !== null);
  assert.equal(total.points[0]!.at, T0 + 120 * MIN);
  assert.deepEqual(total.points.map((p) => p.value), [10, 10, 10, 50, 50, 50, 10, 10]);
  assert.deepEqual(total.events.map((e) => e.id), ["promo"]);
  assert.equal(total.historyBuckets, 120);
  total.points.forEach((p) => assert.ok(p.lower <= p.value && p.value <= p.upper));
  // Per type: the event's mix replaces the observed one (50 × 0.8 code, 50 × 0.2 chat).
  const code = await f.forecasts.forecast({ kind: "requests", model: "m", requestType: "code" }, 8);
  assert.deepEqual(code!.points.map((p) => p.value), [4, 4, 4, 40, 40, 40, 4, 4]);
  const chat = await f.forecasts.forecast({ kind: "tokens", model: "m", requestType: "chat" }, 5);
  assert.deepEqual(chat!.points.map((p) => p.value), [12, 12, 12, 20, 20]);
  assert.deepEqual(await f.forecasts.expectedMix("m", T0 + 124 * MIN), { chat: 0.2, code: 0.8 });
  assert.deepEqual(await f.forecasts.expectedMix("m", T0 + 130 * MIN), { chat: 0.6, code: 0.4 });
  assert.equal(await f.forecasts.forecast({ kind: "requests", model: "nope" }, 3), null);
});

Deno.test("GET /api/forecast answers points, the chosen model and backtest accuracy", async () => {
  using f = await setup();
  const response = await f.app.request("/api/forecast?series=requests:m&horizon=10m");
  assert.equal(response.status, 200);
  const body = await response.json();
  assert.equal(body.series, "requests:m");
  assert.equal(body.bucket_ms, MIN);
  assert.equal(body.points.length, 10);
  assert.equal(body.points[3].value, 50);
  assert.equal(typeof body.model, "string");
  assert.ok("last_value" in body.backtest && "holt" in body.backtest);
  assert.equal(body.backtest.last_value.mase, 0);
  assert.equal(body.events[0].name, "promo");
  const buckets = await (await f.app.request("/api/forecast?series=requests:m&horizon=4")).json();
  assert.equal(buckets.points.length, 4);
  const fallback = await (await f.app.request("/api/forecast?series=tokens:m")).json();
  assert.equal(fallback.points.length, 15); // prewarm.horizon
  const series = await (await f.app.request("/api/series")).json();
  assert.deepEqual(series.series, [
    "requests:m",
    "requests:m:chat",
    "requests:m:code",
    "tokens:m",
    "tokens:m:chat",
    "tokens:m:code",
  ]);
});

Deno.test("GET /api/forecast answers 400 naming the parameter and 404 for an unknown series", async () => {
  using f = await setup();
  const cases: [string, number, RegExp][] = [
    ["/api/forecast", 400, /series is required/],
    ["/api/forecast?series=latency:m", 400, /series: .*kind must be/],
    ["/api/forecast?series=requests:m&horizon=soon", 400, /horizon must be a bucket count/],
    ["/api/forecast?series=requests:m&horizon=0", 400, /horizon must be 1 to 10080/],
    ["/api/forecast?series=requests:m&horizon=8d", 400, /horizon must be 1 to 10080/],
    ["/api/forecast?series=requests:nope", 404, /no series "requests:nope"/],
    ["/api/forecast?series=requests:m:unseen", 404, /no series/],
    ["/api/forecast?series=expert:m:L0:E0", 404, /no series/],
  ];
  for (const [path, status, message] of cases) {
    const response = await f.app.request(path);
    assert.equal(response.status, status, path);
    assert.match((await response.json()).error, message);
  }
});
