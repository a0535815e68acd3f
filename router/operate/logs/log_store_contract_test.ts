/**
 * One contract, both log stores, checked against answers that Switchyard did not compute:
 * the fixture logs are written as local files for {@linkcode LocalLogStore} and pushed to
 * a stand-in Loki for {@linkcode LokiLogStore}; every query of `tests/_support/
 * loki_golden.ts` (hand-written from Loki's documented semantics) must get exactly the
 * golden answer from the local store, and the forwarding path must send exactly the
 * golden parameters (the stand-in answers nothing else) and hand the answer back intact.
 */
import assert from "node:assert/strict";
import { startLokiTestServer } from "../../../tests/_support/loki_test_server.ts";
import { type GoldenAnswer, LOKI_GOLDEN } from "../../../tests/_support/loki_golden.ts";
import {
  fixtureEntries,
  T0_MS,
  writeFixtureDir,
} from "../../../tests/_support/router/log_fixture.ts";
import { LocalLogStore } from "./local_log_store.ts";
import { type LogStore, LokiQueryError } from "./log_store.ts";
import { LokiLogStore } from "./loki_log_store.ts";
import { parseQuery } from "./logql_query.ts";
import { parseMetricRange, parseQueryRange } from "./query_range_params.ts";
import { MetricQueryError } from "./metric_eval.ts";

async function ask(store: LogStore, golden: GoldenAnswer): Promise<unknown> {
  const { query, ...rest } = golden.params;
  const params = new URLSearchParams(rest);
  const parsed = parseQuery(query!);
  const body = parsed.kind === "log"
    ? await store.queryRange({
      query: query!,
      parsed: parsed.log,
      range: parseQueryRange(params, T0_MS),
    })
    : await store.queryMetric({
      query: query!,
      parsed: parsed.metric,
      range: parseMetricRange(params, T0_MS),
    });
  return body.data;
}

Deno.test("log stores: local files and Loki forwarding give Loki's golden answers", async (t) => {
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
    const local = new LocalLogStore({ dir });
    const remote = new LokiLogStore({ url: loki.url, tenant: "switchyard" });
    for (const golden of LOKI_GOLDEN) {
      await t.step(golden.name, async () => {
        if (golden.status === 200) {
          const want = (golden.body as { data: unknown }).data;
          assert.deepEqual(await ask(local, golden), want, "local store");
          assert.deepEqual(await ask(remote, golden), want, "forwarded to Loki");
          return;
        }
        await assert.rejects(ask(local, golden), (error: Error) => {
          assert.ok(error instanceof MetricQueryError, String(error));
          assert.ok(error.message.startsWith(String(golden.body)), error.message);
          return true;
        });
        await assert.rejects(ask(remote, golden), (error: Error) => {
          assert.ok(error instanceof LokiQueryError && error.status === 400, String(error));
          assert.ok(error.message.includes(String(golden.body)), error.message);
          return true;
        });
      });
    }
    const queries = loki.requests.filter((r) => r.path.endsWith("query_range"));
    assert.equal(queries.length, LOKI_GOLDEN.length);
    assert.ok(queries.every((r) => r.tenant === "switchyard"));
  } finally {
    await loki.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the stand-in Loki answers no query it has no golden answer for", async () => {
  const loki = startLokiTestServer();
  try {
    const response = await fetch(
      `${loki.url}/loki/api/v1/query_range?query=${encodeURIComponent('{service="x"}')}`,
    );
    assert.equal(response.status, 400);
    assert.match(await response.text(), /no golden answer/);
  } finally {
    await loki.close();
  }
});
