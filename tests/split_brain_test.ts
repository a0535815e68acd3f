/**
 * Two routers that do not share state against one pool (real processes): the first
 * steers the backends; the second's plan calls are refused (409, the backends' 409 passed
 * on), counted on both sides, and the backends stay on the first router's plan.
 */
import assert from "node:assert/strict";
import { freePort, startPool, startProcess } from "../tools/pool/processes.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { waitFor } from "./_support/wait_for.ts";

const ADMIN = "split-admin-token-0123456789";

interface BackendPlan {
  active: number | null;
  owner: { pool: string; term: number } | null;
}

Deno.test("a second router with its own state cannot steer the pool: 409, backends stay on the first's plan", async () => {
  const modelDir = await makeTinyModel();
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: { SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN, SWITCHYARD_LOG__LEVEL: "error" },
  });
  const auth = { authorization: `Bearer ${pool.token}` };
  const admin = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
  const plans = () =>
    Promise.all(
      pool.backends.map(async (b) =>
        await (await fetch(`${b.url}/v2/plan`, { headers: auth })).json() as BackendPlan
      ),
    );
  let second: Awaited<ReturnType<typeof startProcess>> | undefined;
  try {
    // The first router (pool "test-pool") stages its initial plan on both backends.
    await waitFor("the first router's plan on every backend", async () => {
      const all = await plans();
      return all.every((p) => p.active !== null && p.owner?.pool === "test-pool");
    }, { timeoutMs: 60_000 });

    // A second router: its own state in memory, so its own pool id.
    const port = freePort();
    const env: Record<string, string> = {
      ...pool.routerEnv(),
      SWITCHYARD_ROUTER__PORT: String(port),
    };
    delete env["SWITCHYARD_STATE__POOL_ID"];
    second = await startProcess("router/main.ts", { url: `http://127.0.0.1:${port}`, env });
    const swap = Array.from(
      { length: TINY.layers },
      () => Array.from({ length: TINY.experts }, (_, e) => (e + 1) % TINY.experts),
    );
    const refused = await fetch(`${second.url}/api/plan/apply`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ phy2log: swap }),
    });
    const body = await refused.json();
    assert.equal(refused.status, 409, JSON.stringify(body));
    assert.match(body.error, /follows pool "test-pool"/);
    const before = await plans();
    assert.ok(before.every((p) => p.owner?.pool === "test-pool"), JSON.stringify(before));

    // The first router still steers: its next plan is taken by every backend.
    const applied = await fetch(`${pool.router.url}/api/plan/apply`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ phy2log: swap }),
    });
    const version = (await applied.json()).version;
    assert.equal(applied.status, 200);
    const after = await plans();
    assert.deepEqual(after.map((p) => p.active), [version, version]);
    assert.ok(after.every((p) => p.owner?.pool === "test-pool"));

    // Counted on both sides.
    const metrics = await (await fetch(`${second.url}/metrics`)).text();
    assert.match(metrics, /^switchyard_plan_calls_refused_total [1-9]/m);
    const backendMetrics = await (await fetch(`${pool.backends[0]!.url}/metrics`, {
      headers: auth,
    })).text();
    assert.match(backendMetrics, /^switchyard_plan_refused_total\{reason="other_pool"\} [1-9]/m);
    assert.match(backendMetrics, /^switchyard_plan_owner_term\{pool="test-pool"\} \d+/m);
  } finally {
    await second?.kill();
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
