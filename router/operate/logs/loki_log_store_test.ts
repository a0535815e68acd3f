import assert from "node:assert/strict";
import { startLokiTestServer } from "../../../tests/_support/loki_test_server.ts";
import { ConfigSchema } from "../../../shared/config.ts";
import { createLogStore } from "./create_log_store.ts";
import { LocalLogStore } from "./local_log_store.ts";
import { LokiLogStore } from "./loki_log_store.ts";
import { parseLogQL } from "./logql_parser.ts";
import { parseQueryRange } from "./query_range_params.ts";

Deno.test("createLogStore() picks Loki when loki.url is set, else the local files", () => {
  const local = createLogStore(ConfigSchema.parse({ log: { dir: "x" } }));
  assert.ok(local instanceof LocalLogStore);
  const loki = createLogStore(ConfigSchema.parse({ loki: { url: "http://127.0.0.1:3100" } }));
  assert.ok(loki instanceof LokiLogStore);
  assert.equal(loki.kind, "loki");
});

Deno.test("the test Loki takes gzip JSON pushes, refuses protobuf, and LokiLogStore reads them back", async () => {
  // The one query below, answered by hand from the pushed entries (no LogQL code).
  const loki = startLokiTestServer({
    answer: (params, entries) =>
      params["query"] === '{service="router"} |= "hell"'
        ? {
          status: "success",
          data: {
            resultType: "streams",
            result: entries.filter((e) => e.line.includes("hell")).map((e) => ({
              stream: e.labels,
              values: [[String(e.ns), e.line]],
            })),
          },
        }
        : undefined,
  });
  try {
    const body = JSON.stringify({
      streams: [{
        stream: { service: "router", level: "info" },
        values: [["1714557600000000000", "hello"]],
      }],
    });
    const gzipped = await new Response(
      new Blob([body]).stream().pipeThrough(new CompressionStream("gzip")),
    ).arrayBuffer();
    const push = await fetch(`${loki.url}/loki/api/v1/push`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      body: gzipped,
    });
    assert.equal(push.status, 204, await push.text());
    assert.equal(loki.requests.at(-1)!.contentEncoding, "gzip");
    const protobuf = await fetch(`${loki.url}/loki/api/v1/push`, {
      method: "POST",
      headers: { "content-type": "application/x-protobuf" },
      body: new Uint8Array([1, 2, 3]),
    });
    assert.equal(protobuf.status, 415);
    await protobuf.body?.cancel();
    const bad = await fetch(`${loki.url}/loki/api/v1/push`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ streams: [{ stream: { a: "b" }, values: [[1, "x"]] }] }),
    });
    assert.equal(bad.status, 400);
    assert.equal(
      await bad.text(),
      'push body: streams[0].values[0] must be ["<unix ns>", "<line>"]',
    );
    assert.equal(await fetch(`${loki.url}/ready`).then((r) => r.text()), "ready");

    const query = '{service="router"} |= "hell"';
    const range = parseQueryRange(
      new URLSearchParams({ start: "1714557599", end: "1714557601" }),
      0,
    );
    const result = await new LokiLogStore({ url: `${loki.url}/` }).queryRange({
      query,
      parsed: parseLogQL(query),
      range,
    });
    assert.deepEqual(result.data.result, [
      { stream: { service: "router", level: "info" }, values: [["1714557600000000000", "hello"]] },
    ]);
    assert.equal(loki.requests.at(-1)!.tenant, undefined, "no tenant configured, no header");
  } finally {
    await loki.close();
  }
});
