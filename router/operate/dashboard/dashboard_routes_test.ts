import assert from "node:assert/strict";
import { Hono } from "hono";
import { ApiError, errorResponse } from "../../../shared/errors.ts";
import type { Alert } from "../alerts/alert_types.ts";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { dashboardRoutes } from "./dashboard_routes.ts";
import { LoadTimeline } from "./load_timeline.ts";

const ALERT: Alert = {
  id: "backend_down:backend-2",
  kind: "backend_down",
  subject: "backend-2 <b>",
  state: "firing",
  firedAt: 1_700_000_000_000,
  resolvedAt: undefined,
  value: 0,
  threshold: 1,
  message: "backend-2 is down",
};

function setup(options: { maxClients?: number; maxPerClient?: number; plan?: boolean } = {}) {
  const clock = new ManualClock();
  const timeline = new LoadTimeline();
  let rate = 1;
  const app = new Hono();
  app.onError((error) => {
    if (error instanceof ApiError) return errorResponse(error);
    throw error;
  });
  app.get("/api/load", (c) =>
    c.json({
      at: clock.now(),
      detail: c.req.query("detail") ?? null,
      models: [{ model: "m", layers: [{ layer: 0, expert_tokens_s: [rate, 2] }, { layer: 1 }] }],
    }));
  if (options.plan !== false) app.get("/api/plan", (c) => c.json({ version: 3 }));
  timeline.record({
    at: clock.now(),
    backends: [],
    models: [{
      model: "m",
      layers: [0, 1].map((layer) => ({
        layer,
        expertTokensPerS: [layer, 9],
        balancedness: 1,
        expertSkew: { top10Share: 0, cv: 0 },
      })),
    }],
    pool: { reporting: 1, balancedness: 1, utilisationBalancedness: 1, utilisationCv: 0 },
  });
  const dashboard = dashboardRoutes({
    api: (path) => app.request(path),
    timeline,
    clock,
    logger: new MemoryLogger(),
    alerts: { active: () => [ALERT], recent: () => [ALERT] },
    ...(options.maxClients ? { maxClients: options.maxClients } : {}),
    ...(options.maxPerClient ? { maxPerClient: options.maxPerClient } : {}),
  });
  app.route("/", dashboard.app);
  return { app, clock, dashboard, setRate: (value: number) => rate = value };
}

/** Reads SSE events from `body` until `count` snapshot events arrived. */
async function readSnapshots(reader: ReadableStreamDefaultReader<Uint8Array>, count: number) {
  const decoder = new TextDecoder();
  const snapshots: Record<string, unknown>[] = [];
  let buffer = "";
  while (snapshots.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!event.includes("event: snapshot")) continue;
      const data = event.split("\n").find((line) => line.startsWith("data: "))!;
      snapshots.push(JSON.parse(data.slice(6)));
    }
  }
  return snapshots;
}

Deno.test("GET /dashboard serves the page with a strict CSP, naming the installed ECharts", async () => {
  const { app, dashboard } = setup();
  const response = await app.request("/dashboard");
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type")!, /text\/html/);
  assert.match(response.headers.get("content-security-policy")!, /script-src 'self';/);
  const html = await response.text();
  const version = JSON.parse(
    await Deno.readTextFile(new URL("../../../node_modules/echarts/package.json", import.meta.url)),
  ).version;
  assert.ok(html.includes(`/dashboard/assets/echarts.js?v=${version}`), "echarts URL in page");
  assert.ok(!html.includes("__ECHARTS_SRC__"));
  const echarts = await app.request(`/dashboard/assets/echarts.js?v=${version}`);
  assert.equal(echarts.status, 200);
  assert.match(echarts.headers.get("cache-control")!, /max-age=31536000, immutable/);
  assert.match(echarts.headers.get("content-type")!, /javascript/);
  assert.ok((await echarts.text()).length > 100_000);
  await dashboard.close();
});

Deno.test("dashboard files: known ones with ETag revalidation, anything else 404", async () => {
  const { app, dashboard } = setup();
  const js = await app.request("/dashboard/static/dashboard.js");
  assert.equal(js.status, 200);
  assert.equal(js.headers.get("cache-control"), "no-cache");
  await js.body?.cancel();
  const again = await app.request("/dashboard/static/dashboard.js", {
    headers: { "if-none-match": js.headers.get("etag")! },
  });
  assert.equal(again.status, 304);
  for (const path of ["/dashboard/static/..%2Fdashboard_routes.ts", "/dashboard/static/x.js"]) {
    const missing = await app.request(path);
    assert.equal(missing.status, 404, path);
    await missing.body?.cancel();
  }
  await dashboard.close();
});

Deno.test("GET /api/dashboard/snapshot joins load (with replicas), plan, alerts and a layer's timeline", async () => {
  const { app, dashboard } = setup();
  const body = await (await app.request("/api/dashboard/snapshot?layer=1")).json();
  assert.equal(body.load.detail, "replicas");
  assert.equal(body.load.models[0].layers[0].expert_tokens_s[0], 1);
  assert.deepEqual(body.plan, { version: 3 });
  assert.equal(body.alerts.active[0].subject, "backend-2 <b>");
  assert.equal(body.alerts.active[0].resolved_at, null);
  assert.equal(body.timeline.layer, 1);
  assert.deepEqual(body.timeline.columns[0].expert_tokens_s, [1, 9]);
  assert.equal(body.trend.length, 1);
  const bad = await app.request("/api/dashboard/snapshot?layer=-1");
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /layer must be a non-negative integer, got "-1"/);
  await dashboard.close();
});

Deno.test("a router without a balancer shows plan null", async () => {
  const { app, dashboard } = setup({ plan: false });
  const body = await (await app.request("/api/dashboard/snapshot")).json();
  assert.equal(body.plan, null);
  assert.equal(body.timeline.layer, 0);
  await dashboard.close();
});

Deno.test("GET /api/stream pushes a snapshot at once and one per interval", async () => {
  const { app, clock, dashboard, setRate } = setup();
  const response = await app.request("/api/stream");
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type")!, /text\/event-stream/);
  const reader = response.body!.getReader();
  const [first] = await readSnapshots(reader, 1);
  setRate(7);
  await clock.advance(1000);
  const [second] = await readSnapshots(reader, 1);
  assert.ok((second!.seq as number) > (first!.seq as number));
  assert.ok((second!.at as number) > (first!.at as number));
  // deno-lint-ignore no-explicit-any
  assert.equal((second!.load as any).models[0].layers[0].expert_tokens_s[0], 7);
  await reader.cancel();
  assert.equal(dashboard.stream.clients, 0);
  await dashboard.close();
});

Deno.test("GET /api/stream is bounded: beyond maxClients 503 with Retry-After; a disconnect frees a slot", async () => {
  const { app, dashboard } = setup({ maxClients: 2 });
  const a = (await app.request("/api/stream")).body!.getReader();
  const b = (await app.request("/api/stream")).body!.getReader();
  const refused = await app.request("/api/stream");
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get("retry-after"), "5");
  assert.match((await refused.json()).error, /2 dashboard streams are open/);
  await a.cancel();
  const c = await app.request("/api/stream");
  assert.equal(c.status, 200);
  await dashboard.close();
  // close() ends every stream: readers see the end instead of hanging.
  assert.equal(dashboard.stream.clients, 0);
  for (const reader of [b, c.body!.getReader()]) {
    while (!(await reader.read()).done) { /* drain */ }
  }
});

Deno.test("GET /api/stream is bounded per client address: beyond it 429; others still get streams", async () => {
  const { app, dashboard } = setup({ maxClients: 8, maxPerClient: 2 });
  const from = (hostname: string) => ({ remoteAddr: { hostname, port: 1, transport: "tcp" } });
  const a1 = (await app.request("/api/stream", {}, from("10.0.0.1"))).body!.getReader();
  const a2 = await app.request("/api/stream", {}, from("10.0.0.1"));
  assert.equal(a2.status, 200);
  const refused = await app.request("/api/stream", {}, from("10.0.0.1"));
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get("retry-after"), "5");
  assert.match((await refused.json()).error, /limits\.sse_streams_per_client/);
  const b = await app.request("/api/stream", {}, from("10.0.0.2"));
  assert.equal(b.status, 200);
  // A closed stream frees its owner's slot.
  await a1.cancel();
  const again = await app.request("/api/stream", {}, from("10.0.0.1"));
  assert.equal(again.status, 200);
  await dashboard.close();
  for (const response of [a2, b, again]) {
    const reader = response.body!.getReader();
    while (!(await reader.read()).done) { /* drain */ }
  }
});
