/**
 * One contract, both log stores: the same fixture logs, written as local files for
 * {@linkcode LocalLogStore} and pushed to a stand-in Loki (tests/_support, since no Loki
 * server can be installed here) for {@linkcode LokiLogStore}, must answer every query
 * with the same, known result.
 */
import assert from "node:assert/strict";
import { startLokiTestServer } from "../../tests/_support/loki_test_server.ts";
import { fixtureEntries, ns, T0_MS, writeFixtureDir } from "./_log_fixture.ts";
import { LocalLogStore } from "./local_log_store.ts";
import type { LogStore } from "./log_store.ts";
import { LokiLogStore } from "./loki_log_store.ts";
import { parseLogQL } from "./logql_parser.ts";
import { parseQueryRange } from "./query_range_params.ts";
import type { StreamsResponse } from "./streams_result.ts";

const WHOLE = { start: String(T0_MS - 1000), end: String(T0_MS + 60_000) };

function ask(store: LogStore, query: string, params: Record<string, string> = WHOLE) {
  const range = parseQueryRange(new URLSearchParams({ ...WHOLE, ...params }), T0_MS);
  return store.queryRange({ query, parsed: parseLogQL(query), range });
}

/** `<ms after T0> <line>` per entry, in the order of the answer's streams and values. */
function lines(response: StreamsResponse): string[] {
  return response.data.result.flatMap((stream) =>
    stream.values.map(([t, line]) => `${(BigInt(t) - BigInt(ns(0))) / 1_000_000n} ${line}`)
  );
}

/** Entries across streams, newest first: `<ms after T0>`. */
function times(response: StreamsResponse): number[] {
  return response.data.result.flatMap((s) =>
    s.values.map(([t]) => Number((BigInt(t) - BigInt(ns(0))) / 1_000_000n))
  )
    .sort((a, b) => b - a);
}

const CASES: {
  name: string;
  query: string;
  params?: Record<string, string>;
  check: (r: StreamsResponse) => void;
}[] = [
  {
    name: "a selector groups lines into streams by service and level, newest first",
    query: '{service="router"}',
    check: (r) => {
      assert.deepEqual(r.data.result.map((s) => s.stream), [
        { level: "error", service: "router" },
        { level: "info", service: "router" },
        { level: "warn", service: "router" },
      ]);
      assert.deepEqual(r.data.result[1]!.values.map(([t]) => t), [ns(2000), ns(1000), ns(0)]);
    },
  },
  {
    name: "backend lines carry the backend label (gzipped rotation included)",
    query: '{service="backend", backend="backend-2"}',
    check: (r) => assert.deepEqual(times(r), [6000, 600]),
  },
  {
    name: "limit keeps the newest entries backward",
    query: '{service=~".+"}',
    params: { limit: "2" },
    check: (r) => assert.deepEqual(times(r), [6000, 5000]),
  },
  {
    name: "limit keeps the oldest entries forward, values ascending",
    query: '{service=~".+"}',
    params: { limit: "3", direction: "forward" },
    check: (r) => {
      assert.deepEqual(times(r), [600, 500, 0]);
      const info = r.data.result.find((s) => s.stream["service"] === "backend")!;
      assert.deepEqual(info.values.map(([t]) => t), [ns(500)]);
    },
  },
  {
    name: "the range is [start, end)",
    query: '{service=~"router|backend"}',
    params: { start: new Date(T0_MS + 1000).toISOString(), end: String((T0_MS + 3000) * 1e6) },
    check: (r) => assert.deepEqual(times(r), [2000, 1000]),
  },
  {
    name: "level regex and a line filter",
    query: '{level=~"warn|error"} |= "backend" != "exploded"',
    check: (r) => assert.deepEqual(times(r), [6000, 5000, 3000]),
  },
  {
    name: "json, a numeric label filter and line_format",
    query:
      '{service="router"} | json | status >= 500 | line_format "{{.request_id}} {{.status}} {{.ms}}"',
    check: (r) => {
      assert.deepEqual(lines(r).sort(), ["3000 req-3 503 40", "4000 req-4 500 120"]);
      const req4 = r.data.result.find((stream) => stream.stream["request_id"] === "req-4");
      assert.equal(req4?.stream["request_type"], "math", "extracted labels join the stream");
    },
  },
  {
    name: "nested json fields flatten with _, clashing keys get _extracted",
    query:
      '{service="backend"} | json | detail_queue_rows > 5 | line_format "{{.backend_extracted}} {{.detail_layer}}"',
    check: (r) => assert.deepEqual(lines(r), ["5000 backend-1 1"]),
  },
  {
    name: "or between label filters",
    query: '{service="router"} | json | request_type="chat" or ms > 100',
    check: (r) => assert.deepEqual(times(r), [4000, 1000]),
  },
];

Deno.test("log stores: local files and Loki answer the same queries the same way", async (t) => {
  const dir = await writeFixtureDir();
  const loki = startLokiTestServer();
  try {
    const streams = fixtureEntries().map((e) => ({ stream: e.labels, values: [[e.ns, e.line]] }));
    const push = await fetch(`${loki.url}/loki/api/v1/push`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-scope-orgid": "switchyard" },
      body: JSON.stringify({ streams }),
    });
    assert.equal(push.status, 204, await push.text());
    const stores: LogStore[] = [
      new LocalLogStore({ dir }),
      new LokiLogStore({ url: loki.url, tenant: "switchyard" }),
    ];
    for (const testCase of CASES) {
      await t.step(testCase.name, async () => {
        const [local, remote] = await Promise.all(
          stores.map((s) => ask(s, testCase.query, testCase.params)),
        );
        testCase.check(local!);
        assert.deepEqual(remote!.data, local!.data);
      });
    }
    assert.ok(
      loki.requests.filter((r) => r.path.endsWith("query_range")).every((r) =>
        r.tenant === "switchyard"
      ),
    );
  } finally {
    await loki.close();
    await Deno.remove(dir, { recursive: true });
  }
});
