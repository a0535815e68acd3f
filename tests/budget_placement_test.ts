/**
 * Budget-aware placement on real processes: two backends, each with a memory budget of
 * 60 % of the model's routed-expert bytes. The router's planner sizes its plan within the
 * budgets (4 slots per layer instead of 5: no spare replicas), and after skewed traffic
 * no backend holds more routed-expert bytes than its budget.
 */
import assert from "node:assert/strict";
import { expertFileBytes } from "../gpu-backend/residency/expert_bytes.ts";
import { loadManifest } from "../gpu-backend/server/start_backend.ts";
import { createRandom } from "../tools/model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { startPool } from "../tools/pool/processes.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

Deno.test("plans fit each backend's memory budget, and residency stays within it", async () => {
  const modelDir = await makeTinyModel();
  const traffic = (await loadDemoTraffic(modelDir))!;
  const sizes = (await expertFileBytes(modelDir, await loadManifest(modelDir))).flat();
  const total = sizes.reduce((a, b) => a + b, 0);
  const budgetBytes = Math.floor(0.6 * total);
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: {
      SWITCHYARD_STATE__KV: ":memory:",
      SWITCHYARD_LOG__REQUESTS: "false",
      SWITCHYARD_BACKEND__MEMORY_BUDGET_MB: String(budgetBytes / 2 ** 20),
      SWITCHYARD_EXPERT_BALANCER__ADJUST_INTERVAL: "2s",
    },
  });
  try {
    const random = createRandom(5);
    const deadline = Date.now() + 60_000;
    let plan: { version: number | null; slots_per_backend: number | null } = {
      version: null,
      slots_per_backend: null,
    };
    let residencies: { budget_bytes: number; used_bytes: number }[] = [];
    // Skewed traffic until the plan is sized within the budgets and residency settled.
    while (Date.now() < deadline) {
      for (let i = 0; i < 10; i++) {
        const call = await infer(
          pool.router.url,
          TINY.name,
          demoTokens(traffic, "code", 4, random),
          TINY.dModel,
          { requestType: "code" },
        );
        assert.equal(call.status, 200, JSON.stringify(call.error));
      }
      plan = await (await fetch(`${pool.router.url}/api/plan`)).json();
      residencies = await Promise.all(
        pool.backends.map(async (b) =>
          await (await fetch(`${b.url}/v2/residency`, {
            headers: { authorization: `Bearer ${pool.token}` },
          })).json()
        ),
      );
      if (
        plan.slots_per_backend === 4 && residencies.every((r) => r.used_bytes <= r.budget_bytes)
      ) break;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    // floor(0.6 · 16 experts ÷ 2 layers) = 4 slots per layer: every expert once, no spares.
    assert.equal(plan.slots_per_backend, 4, JSON.stringify(plan));
    for (const r of residencies) {
      assert.equal(r.budget_bytes, budgetBytes);
      assert.ok(r.used_bytes <= r.budget_bytes, `used ${r.used_bytes} of ${r.budget_bytes}`);
    }
    // The backends say so in their metrics: budget, used, and no excess.
    const metrics = await (await fetch(`${pool.backends[0]!.url}/metrics`, {
      headers: { authorization: `Bearer ${pool.token}` },
    })).text();
    assert.match(metrics, new RegExp(`^switchyard_residency_budget_bytes ${budgetBytes}$`, "m"));
    assert.match(metrics, /^switchyard_residency_excess_bytes 0$/m);
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
