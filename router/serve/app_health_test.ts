import assert from "node:assert/strict";
import { createApp } from "./app.ts";
import type { RoutingPolicy } from "./entry/policy.ts";
import { fakeMetadata } from "../../tests/_support/router/fake_backend.ts";
import { createHarness } from "../../tests/_support/router/harness.ts";
import { postInfer, tinyRequest } from "../../tests/_support/router/requests.ts";
import { ROUTER_VERSION } from "../../shared/version.ts";

Deno.test("GET /v2 reports the server name, version and binary extension", async () => {
  const h = await createHarness();
  const res = await h.app.request("/v2");
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), {
    name: "switchyard",
    version: ROUTER_VERSION,
    extensions: ["binary_tensor_data"],
  });
  await h.close();
});

Deno.test("GET /v2/health/live is 200 even with no healthy backend", async () => {
  const h = await createHarness();
  for (const backend of h.backends) backend.mode = "refuse";
  await h.pool.checkNow();
  const res = await h.app.request("/v2/health/live");
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { live: true });
  await h.close();
});

Deno.test("GET /v2/health/ready is 200 with one healthy backend and 503 with none", async () => {
  const h = await createHarness();
  h.backends[1]!.mode = "unready";
  await h.pool.checkNow();
  const one = await h.app.request("/v2/health/ready");
  assert.equal(one.status, 200);
  const body = await one.json();
  assert.equal(body.ready, true);
  assert.equal(body.details.healthy_backends, 1);
  assert.equal(body.details.total_backends, 2);
  assert.deepEqual(body.details.backends[0], {
    id: "127.0.0.1:9001",
    name: "127.0.0.1:9001",
    healthy: true,
    in_flight: 0,
    models: ["tiny"],
  });
  assert.equal(body.details.backends[1].healthy, false);
  assert.equal(h.pool.views()[1]!.lastError, "ready check answered 503");
  h.backends[0]!.mode = "refuse";
  // Refused connections eject after router.outlier.eject_after (3) in a row.
  for (let i = 0; i < 3; i++) await h.pool.checkNow();
  const none = await h.app.request("/v2/health/ready");
  assert.equal(none.status, 503);
  assert.equal((await none.json()).details.healthy_backends, 0);
  await h.close();
});

Deno.test("GET /v2/models/{m} serves the backend's metadata and 404 for unknown models", async () => {
  const h = await createHarness({ discover: false });
  const res = await h.app.request("/v2/models/tiny");
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), fakeMetadata("tiny", 4));
  const missing = await h.app.request("/v2/models/other");
  assert.equal(missing.status, 404);
  assert.deepEqual(await missing.json(), {
    error: 'Cannot find model "other": no backend serves it',
    code: "not_found",
  });
  await h.close();
});

Deno.test("GET /v2/models/{m}/ready follows the health of the backends serving it", async () => {
  const h = await createHarness();
  const ready = await h.app.request("/v2/models/tiny/ready");
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { name: "tiny", ready: true });
  for (const backend of h.backends) backend.mode = "unready";
  await h.pool.checkNow();
  const unready = await h.app.request("/v2/models/tiny/ready");
  assert.equal(unready.status, 503);
  assert.deepEqual(await unready.json(), { name: "tiny", ready: false });
  assert.equal((await h.app.request("/v2/models/nope/ready")).status, 503);
  await h.close();
});

Deno.test("health checks take a failing backend out of rotation and bring it back", async () => {
  const h = await createHarness();
  const interval = h.config.router.health_interval;
  const route = async (count: number) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const res = await postInfer(h, tinyRequest());
      ids.push(res.headers.get("x-switchyard-backend")!);
      await res.body?.cancel();
    }
    return new Set(ids);
  };
  assert.deepEqual(await route(4), new Set(["127.0.0.1:9001", "127.0.0.1:9002"]));
  h.backends[1]!.mode = "unready";
  await h.clock.advance(interval);
  assert.equal(h.pool.views()[1]!.healthy, false);
  assert.deepEqual(await route(4), new Set(["127.0.0.1:9001"]));
  assert.equal(h.logger.find("backend down").at(-1)?.fields["backend"], "127.0.0.1:9002");
  h.backends[1]!.mode = "ok";
  await h.clock.advance(interval);
  assert.equal(h.pool.views()[1]!.healthy, false, "one passing check does not re-admit");
  // Two in a row do: the pool re-checks an ejected backend soon after a pass.
  await h.clock.advance(250);
  assert.equal(h.pool.views()[1]!.healthy, true);
  assert.deepEqual(h.pool.views()[1]!.models, ["tiny"]);
  assert.deepEqual(await route(4), new Set(["127.0.0.1:9001", "127.0.0.1:9002"]));
  assert.equal(h.logger.find("backend up").length, 3);
  await h.close();
});

Deno.test("unknown routes answer a JSON 404", async () => {
  const h = await createHarness();
  const res = await h.app.request("/v1/nothing");
  assert.equal(res.status, 404);
  assert.equal((await res.json()).code, "not_found");
  assert.ok(res.headers.get("x-request-id"));
  await h.close();
});

Deno.test("an unexpected error becomes a generic 500, logged with its request id", async () => {
  const h = await createHarness();
  const broken: RoutingPolicy = {
    name: "broken",
    pick: () => {
      throw new Error("policy bug with internal detail");
    },
  };
  const app = createApp({ ...h, policy: broken, fetch: h.network.fetch });
  const res = await app.request("/v2/models/tiny/infer", {
    method: "POST",
    body: tinyRequest().body,
  });
  assert.equal(res.status, 500);
  const body = await res.json();
  assert.deepEqual(body, { error: "Cannot handle request: internal error", code: "internal" });
  const [logged] = h.logger.find("request failed");
  assert.equal(logged?.fields["request_id"], res.headers.get("x-request-id"));
  assert.equal((logged?.fields["error"] as Error).message, "policy bug with internal detail");
  await h.close();
});

Deno.test("GET /v2/health/ready is 503 naming the state KV when it cannot be read", async () => {
  let state = { ok: false, kv: "data/x.kv", error: 'Cannot open state KV "data/x.kv": broken' };
  const h = await createHarness({ state: () => Promise.resolve(state) });
  const down = await h.app.request("/v2/health/ready");
  assert.equal(down.status, 503);
  const body = await down.json();
  assert.equal(body.ready, false);
  assert.deepEqual(body.details.state, state);
  assert.equal(body.details.healthy_backends, 2);
  state = { ok: true, kv: "data/x.kv" } as typeof state;
  const up = await h.app.request("/v2/health/ready");
  assert.equal(up.status, 200);
  assert.deepEqual((await up.json()).details.state, { ok: true, kv: "data/x.kv" });
  await h.close();
});
