/**
 * Full replication on real processes: two backends without a memory budget hold every
 * expert, so the default balancer (`expert_balancer.placement: auto`) places every expert
 * on every backend as a plan version; requests then run all-local on their entry backend —
 * the backends report no peer hop — and answer as the reference model does. `/api/plan`
 * and `/metrics` say what was decided and why.
 */
import assert from "node:assert/strict";
import { findSamples, parseExposition } from "../shared/metrics/parse_exposition.ts";
import { createRandom } from "../tools/model/prng.ts";
import { loadReferenceModel } from "../tools/model/reference.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { startPool } from "../tools/pool/processes.ts";
import { infer, maxAbsDiff } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { waitFor } from "./_support/wait_for.ts";

Deno.test("the default balancer replicates every expert when it fits, and requests stay local", async () => {
  const modelDir = await makeTinyModel();
  const reference = await loadReferenceModel(modelDir);
  const traffic = (await loadDemoTraffic(modelDir))!;
  const pool = await startPool({ modelDir, backends: 2 });
  try {
    // Step 1: the first plan is full replication, and it says why.
    const plan = await waitFor("a full-replication plan", async () => {
      const body = await (await fetch(`${pool.router.url}/api/plan`)).json();
      return body.version >= 1 && body.slots_per_backend === TINY.experts ? body : undefined;
    }, { timeoutMs: 30_000, intervalMs: 200, retryErrors: false });
    assert.equal(plan.placement.choice, "full_replication");
    assert.equal(plan.placement.full_replication_fits, true);
    assert.match(plan.reason, /full replication: every backend fits all 8 experts per layer/);
    for (const layer of plan.layers) {
      for (const hosted of layer.hosted) {
        assert.deepEqual(hosted.experts, Array.from({ length: TINY.experts }, (_, e) => e));
      }
    }
    await waitFor("every backend on the plan", async () => {
      const active = await Promise.all(
        pool.backends.map(async (b) =>
          (await (await fetch(`${b.url}/v2/plan`, {
            headers: { authorization: `Bearer ${pool.token}` },
          })).json()).active
        ),
      );
      return active.every((version) => version === plan.version) || undefined;
    }, { timeoutMs: 15_000, intervalMs: 200, retryErrors: false });

    // Step 2: traffic; every answer right, and no row crosses a backend.
    const random = createRandom(9);
    for (let i = 0; i < 24; i++) {
      const rows = 1 + (i % 4);
      const tokens = demoTokens(traffic, i % 2 === 0 ? "code" : "chat", rows, random);
      const res = await infer(pool.router.url, TINY.name, tokens, TINY.dModel);
      assert.equal(res.status, 200, JSON.stringify(res.error));
      const diff = maxAbsDiff(
        res.decoded!.tensors.get("output")!.data,
        reference.forward(tokens, rows).output,
      );
      assert.ok(diff <= 1e-4, `answer ${i} differs by ${diff}`);
    }
    const reports = await Promise.all(
      pool.backends.map(async (b) =>
        await (await fetch(`${b.url}/v2/load`, {
          headers: { authorization: `Bearer ${pool.token}` },
        })).json()
      ),
    );
    assert.ok(reports.reduce((n, r) => n + r.requests, 0) >= 24);
    for (const report of reports) {
      assert.equal(
        report.peer?.hops,
        0,
        `${report.backend} crossed: ${JSON.stringify(report.peer)}`,
      );
    }

    // Step 3: the router's metrics say so.
    const metrics = parseExposition(await (await fetch(`${pool.router.url}/metrics`)).text());
    const [placement] = findSamples(metrics, "switchyard_eplb_placement_info");
    assert.equal(placement?.labels["placement"], "full_replication");
    const [switched] = findSamples(metrics, "switchyard_eplb_rebalances_total", {
      outcome: "switched",
      trigger: "balancer",
    });
    assert.ok((switched?.value ?? 0) >= 1);
    assert.equal(findSamples(metrics, "switchyard_eplb_hop_rows_total")[0]?.value, 0);
    assert.equal(findSamples(metrics, "switchyard_eplb_rebalance_due_seconds").length, 0);
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
