import assert from "node:assert/strict";
import type { Hono } from "hono";
import { freePort } from "../../../tools/pool/processes.ts";
import { startLokiTestServer } from "../../../tests/_support/loki_test_server.ts";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import {
  fixtureEntries,
  fixtureLine,
  ns,
  T0_MS,
  writeFixtureDir,
} from "../../../tests/_support/router/log_fixture.ts";
import { LocalLogStore } from "./local_log_store.ts";
import { logRoutes } from "./log_routes.ts";
import type { LogStore } from "./log_store.ts";
import { LokiLogStore } from "./loki_log_store.ts";

const TOKEN = "admin-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const NOW = T0_MS + 10_000;

function appWith(
  store: LogStore,
  options: { adminToken?: string | undefined; logger?: MemoryLogger } = {},
) {
  const adminToken = "adminToken" in options ? options.adminToken : TOKEN;
  const logger = options.logger ?? new MemoryLogger();
  return logRoutes({ adminToken, store, now: () => NOW, logger });
}

async function get(
  app: Hono,
  params: Record<string, string>,
  headers: Record<string, string> = AUTH,
) {
  const response = await app.request(`/api/logs?${new URLSearchParams(params)}`, { headers });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

Deno.test("GET /api/logs needs the admin token: 403 without one configured, 401 without it", async () => {
  const store = new LocalLogStore({ dir: "" });
  const query = { query: '{service="router"}' };
  const none = await get(appWith(store, { adminToken: undefined }), query);
  assert.equal(none.status, 403);
  assert.equal(none.body.error, "Cannot query logs: auth.admin_token is not configured");
  assert.equal((await get(appWith(store), query, {})).status, 401);
  const wrong = await get(appWith(store), query, { authorization: "Bearer nope" });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.error, "Cannot query logs: missing or wrong admin token");
});

Deno.test("GET /api/logs answers 400 naming the problem", async () => {
  const app = appWith(new LocalLogStore({ dir: "" }));
  const cases: [Record<string, string>, string][] = [
    [{}, 'Cannot query logs: query is required, e.g. query={service="router"} |= "error"'],
    [
      { query: '{service="router"} | logfmt' },
      'Unsupported LogQL: "logfmt" parser is not in the supported subset (json only)',
    ],
    [
      { query: 'count_over_time({service="router"}[5m]) / 2' },
      'Unsupported LogQL: binary operation "count_over_time({service="router"}[5m]) / 2" is not in the supported subset',
    ],
    [
      { query: 'stddev_over_time({service="router"} | json | unwrap ms [5m])' },
      'Unsupported LogQL: range aggregation "stddev_over_time" is not in the supported subset (count_over_time, rate, bytes_over_time, bytes_rate, sum_over_time, avg_over_time, min_over_time, max_over_time, quantile_over_time)',
    ],
    [
      { query: 'rate({service="router"}[5m])', step: "0" },
      'Cannot query logs: step: must be a positive duration or number of seconds, got "0"',
    ],
    [
      { query: 'rate({service="router"}[5m])', since: "1d", step: "1" },
      "Cannot query logs: step: exceeded maximum resolution of 11000 points per timeseries; try a larger step",
    ],
    [
      { query: '{service="router"' },
      "Cannot parse LogQL: syntax error at line 1, col 18: unexpected end of query",
    ],
    [
      { query: '{service="router"}', limit: "9999" },
      "Cannot query logs: limit: must be between 1 and 5000, got 9999",
    ],
    [
      { query: '{service="router"}', start: "tomorrow" },
      'Cannot query logs: start: "tomorrow" is not an RFC3339 time or a unix timestamp',
    ],
  ];
  for (const [params, error] of cases) {
    const response = await get(app, params);
    assert.equal(response.status, 400, JSON.stringify(params));
    assert.deepEqual(response.body, { error, code: "bad_request" });
  }
});

Deno.test("GET /api/logs evaluates over local files when Loki is not configured", async () => {
  const dir = await writeFixtureDir();
  try {
    const response = await get(appWith(new LocalLogStore({ dir })), {
      query:
        '{service="router"} | json | status >= 500 | line_format "{{.request_id}} {{.status}}"',
      since: "1m",
      direction: "forward",
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("x-switchyard-log-store"), "local");
    assert.equal(response.body.status, "success");
    assert.equal(response.body.data.resultType, "streams");
    const values = response.body.data.result.flatMap((s: { values: string[][] }) => s.values);
    assert.deepEqual(values, [[ns(3000), "req-3 503"], [ns(4000), "req-4 500"]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("GET /api/logs forwards to Loki with the tenant header and ns times", async () => {
  const listening = (backend: string, offset: number) => ({
    stream: { backend, level: "info", service: "backend" },
    values: [[ns(offset), fixtureLine(offset)]],
  });
  // Hand-written: the two "backend listening" lines, each its own stream.
  const loki = startLokiTestServer({
    golden: [{
      name: "listening lines",
      params: {
        query: '{service="backend"} |= "listening"',
        start: ns(0),
        end: String(BigInt(NOW) * 1_000_000n),
        limit: "10",
        direction: "backward",
      },
      status: 200,
      body: {
        status: "success",
        data: {
          resultType: "streams",
          result: [listening("backend-1", 500), listening("backend-2", 600)],
        },
      },
    }],
  });
  try {
    const streams = fixtureEntries().map((e) => ({ stream: e.labels, values: [[e.ns, e.line]] }));
    const push = await fetch(`${loki.url}/loki/api/v1/push`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-scope-orgid": "acme" },
      body: JSON.stringify({ streams }),
    });
    assert.equal(push.status, 204);
    const app = appWith(new LokiLogStore({ url: loki.url, tenant: "acme", timeoutMs: 2000 }));
    const response = await get(app, {
      query: '{service="backend"} |= "listening"',
      start: "2024-05-01T10:00:00Z",
      limit: "10",
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("x-switchyard-log-store"), "loki");
    const values = response.body.data.result.flatMap((s: { values: string[][] }) =>
      s.values.map(([t]) => t)
    );
    assert.deepEqual(values, [ns(500), ns(600)]);
    const seen = loki.requests.at(-1)!;
    assert.equal(seen.path, "/loki/api/v1/query_range");
    assert.equal(seen.tenant, "acme");
    assert.deepEqual(seen.params, {
      query: '{service="backend"} |= "listening"',
      start: ns(0),
      end: String(BigInt(NOW) * 1_000_000n),
      limit: "10",
      direction: "backward",
    });
  } finally {
    await loki.close();
  }
});

Deno.test("GET /api/logs: Loki errors answer 502 with Loki's message, a slow Loki 504", async () => {
  const loki = startLokiTestServer();
  const logger = new MemoryLogger();
  try {
    const app = appWith(new LokiLogStore({ url: loki.url, timeoutMs: 100 }), { logger });
    loki.failNext(500, "too many outstanding requests\n");
    const failed = await get(app, { query: '{service="router"}' });
    assert.equal(failed.status, 502);
    assert.equal(
      failed.body.error,
      `Cannot query logs: Loki at ${loki.url} answered 500: too many outstanding requests`,
    );
    assert.equal(logger.find("log query failed at Loki").length, 1);
    loki.delayNext(400);
    const slow = await get(app, { query: '{service="router"}' });
    assert.equal(slow.status, 504);
    assert.equal(
      slow.body.error,
      `Cannot query logs: Loki at ${loki.url} did not answer within 100 ms`,
    );
    const before = loki.requests.length;
    const unsupported = await get(app, { query: '{service="router"} | logfmt' });
    assert.equal(unsupported.status, 400, "the subset check runs before Loki is asked");
    assert.equal(loki.requests.length, before);
  } finally {
    await loki.close();
  }
});

Deno.test("GET /api/logs: an unreachable Loki answers 502", async () => {
  const url = `http://127.0.0.1:${freePort()}`;
  const response = await get(appWith(new LokiLogStore({ url })), { query: '{service="router"}' });
  assert.equal(response.status, 502);
  assert.match(
    response.body.error,
    new RegExp(`^Cannot query logs: Loki at ${url} is unreachable: `),
  );
});

Deno.test("GET /api/logs answers a metric query as a matrix, locally and forwarded", async () => {
  const dir = await writeFixtureDir();
  const query = 'sum by (service) (count_over_time({service=~".+"}[10s]))';
  // Up to T0 + 6 s: router 5 lines, backend 4; at T0 + 3 s: router 4, backend 2.
  const want = [
    { metric: { service: "backend" }, values: [[T0_MS / 1000 + 3, "2"], [T0_MS / 1000 + 6, "4"]] },
    { metric: { service: "router" }, values: [[T0_MS / 1000 + 3, "4"], [T0_MS / 1000 + 6, "5"]] },
  ];
  const params = { query, start: ns(3000), end: ns(6000), step: "3s" };
  const loki = startLokiTestServer({
    golden: [{
      name: "per service",
      params: { ...params, step: "3" },
      status: 200,
      body: { status: "success", data: { resultType: "matrix", result: want } },
    }],
  });
  try {
    for (const store of [new LocalLogStore({ dir }), new LokiLogStore({ url: loki.url })]) {
      const response = await get(appWith(store), params);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.data.resultType, "matrix");
      assert.deepEqual(response.body.data.result, want, store.kind);
    }
  } finally {
    await loki.close();
    await Deno.remove(dir, { recursive: true });
  }
});
