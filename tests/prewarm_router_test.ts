import assert from "node:assert/strict";
import { resolveConfig } from "../shared/config.ts";
import { MemoryLogger } from "../shared/logging/memory_logger.ts";
import { type RunningRouter, startRouter } from "../router/wire/server.ts";

/** Runs `test` against a real router on loopback with `env` overrides and in-memory KV. */
async function withRouter(
  env: Record<string, string>,
  test: (router: RunningRouter) => Promise<void>,
): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  const config = resolveConfig({
    env: {
      SWITCHYARD_ROUTER__HOST: "127.0.0.1",
      SWITCHYARD_ROUTER__PORT: "0",
      SWITCHYARD_ROUTER__BACKENDS: '["http://127.0.0.1:9"]',
      ...env,
    },
  });
  const router = await startRouter(config, { kv, logger: new MemoryLogger() });
  try {
    await test(router);
  } finally {
    await router.close();
    kv.close();
  }
}

Deno.test("startRouter() registers the pre-warm job and serves GET /api/prewarm", async () => {
  await withRouter({ SWITCHYARD_PREWARM__THRESHOLD: "0.7" }, async (router) => {
    const response = await fetch(`${router.url}/api/prewarm`);
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.equal(body.enabled, true);
    assert.equal(body.scaler, "advisory");
    assert.equal(body.settings.threshold, 0.7);
    assert.deepEqual(body.decisions, []);
  });
});

Deno.test("startRouter() with prewarm.enabled false has no /api/prewarm", async () => {
  await withRouter({ SWITCHYARD_PREWARM__ENABLED: "false" }, async (router) => {
    const response = await fetch(`${router.url}/api/prewarm`);
    await response.body?.cancel();
    assert.equal(response.status, 404);
  });
});
