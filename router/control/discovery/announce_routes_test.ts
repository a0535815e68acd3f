import assert from "node:assert/strict";
import { Hono } from "hono";
import { createJsonLogger } from "../../../shared/logger.ts";
import { BackendRegistry } from "./backend_registry.ts";
import { announceRoutes } from "./announce_routes.ts";

const TOKEN = "internal-token-0123456789";
const quiet = createJsonLogger({ level: "error", write: () => {} });

async function setUp(internalToken: string | undefined) {
  const kv = await Deno.openKv(":memory:");
  const registry = new BackendRegistry(kv, { clock: { now: () => 1000 }, ttlMs: 15_000 });
  let changes = 0;
  const app = new Hono().route(
    "/api/backends",
    announceRoutes({ registry, internalToken, logger: quiet, onChange: () => changes++ }),
  );
  const post = (body: unknown, token: string | null = TOKEN) =>
    app.request("/api/backends/announce", {
      method: "POST",
      headers: token ? { authorization: `Bearer ${token}` } : {},
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  return { kv, registry, app, post, changes: () => changes };
}

Deno.test("POST /api/backends/announce registers and withdraws a backend with the internal token", async () => {
  const { kv, registry, app, post, changes } = await setUp(TOKEN);
  const response = await post({ url: "http://10.0.0.2:9001", id: "backend-1" });
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), {
    url: "http://10.0.0.2:9001",
    registered: true,
    expires_at: 16_000,
  });
  assert.deepEqual(await registry.source().list(), ["http://10.0.0.2:9001"]);
  const listed = await (await app.request("/api/backends")).json();
  assert.equal(listed.backends[0].id, "backend-1");
  assert.equal((await post({ url: "http://10.0.0.2:9001", leaving: true })).status, 200);
  assert.deepEqual(await registry.source().list(), []);
  assert.equal(changes(), 2);
  kv.close();
});

Deno.test("POST /api/backends/announce refuses callers without the token and names bad fields", async () => {
  const { kv, post } = await setUp(TOKEN);
  assert.equal((await post({ url: "http://10.0.0.2:9001" }, null)).status, 401);
  assert.equal((await post({ url: "http://10.0.0.2:9001" }, "wrong-token-0123456789")).status, 401);
  const bad = await post({ url: "ftp://x" });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /^Cannot announce a backend: url: /);
  const extra = await post({ url: "http://10.0.0.2:9001", weight: 3 });
  assert.equal(extra.status, 400);
  assert.equal((await post("{not json")).status, 400);
  kv.close();
});

Deno.test("POST /api/backends/announce is closed (403) when no internal token is configured", async () => {
  const { kv, post } = await setUp(undefined);
  const response = await post({ url: "http://10.0.0.2:9001" }, null);
  assert.equal(response.status, 403);
  assert.match((await response.json()).error, /auth\.internal_token is not configured/);
  kv.close();
});
