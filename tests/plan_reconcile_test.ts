/**
 * Reconciled placement state over real processes: a restarted backend (which comes back
 * with no active plan) is put back on the router's current plan by the load rounds.
 */
import assert from "node:assert/strict";
import { startPool, type TestPool } from "../tools/pool/processes.ts";
import { findSamples, parseExposition } from "../shared/metrics/parse_exposition.ts";
import { makeTinyModel } from "./_support/tiny_model.ts";

const ADMIN = "test-admin-token-0123456789";

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function routerPlan(pool: TestPool): Promise<{ version: number | null; reason: string }> {
  return await (await fetch(`${pool.router.url}/api/plan`)).json();
}

async function backendActive(pool: TestPool, index: number): Promise<number | null> {
  const response = await fetch(`${pool.backends[index]!.url}/v2/plan`, {
    headers: { authorization: `Bearer ${pool.token}` },
  });
  return (await response.json()).active;
}

Deno.test("a restarted backend is put back on the router's current plan", async () => {
  const modelDir = await makeTinyModel();
  const kvDir = await Deno.makeTempDir();
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: { SWITCHYARD_STATE__KV: `${kvDir}/state.kv`, SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN },
  });
  try {
    // An operator's plan: version 2, not the static one the router would make up.
    await waitFor(
      "the static plan",
      async () => (await routerPlan(pool)).version === 1 || undefined,
    );
    const applied = await fetch(`${pool.router.url}/api/plan/apply`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({
        phy2log: [[0, 1, 2, 3, 4, 5, 6, 7, 0, 1], [7, 6, 5, 4, 3, 2, 1, 0, 2, 3]],
      }),
    });
    assert.equal(applied.status, 200, await applied.text());
    assert.equal((await routerPlan(pool)).version, 2);
    assert.deepEqual([await backendActive(pool, 0), await backendActive(pool, 1)], [2, 2]);

    await pool.restartBackend(1);
    // Back up with no plan; the router's next rounds put it back on version 2.
    const active = await waitFor("the restarted backend on the current plan", async () => {
      const version = await backendActive(pool, 1);
      return version === 2 ? version : undefined;
    });
    assert.equal(active, (await routerPlan(pool)).version);
    assert.equal(await backendActive(pool, 0), 2);
    const metrics = parseExposition(await (await fetch(`${pool.router.url}/metrics`)).text());
    const [reconciled] = findSamples(metrics, "switchyard_plan_reconciliations_total", {
      outcome: "reconciled",
    });
    assert.equal(reconciled?.value, 1);
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
    await Deno.remove(kvDir, { recursive: true });
  }
});
