/**
 * The router's balancer over real processes: the static plan at start, an online
 * rebalance under skewed traffic that loses nothing, the admin API's auth, and a
 * restarted router that continues with the plan it finds in Deno KV.
 */
import assert from "node:assert/strict";
import { createRandom } from "../tools/model/prng.ts";
import { loadReferenceModel } from "../tools/model/reference.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { startPool } from "../tools/pool/processes.ts";
import { infer, maxAbsDiff } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { waitFor } from "./_support/wait_for.ts";

const ADMIN = "test-admin-token-0123456789";

async function planOf(url: string) {
  const response = await fetch(`${url}/api/plan`);
  return await response.json();
}

Deno.test("the balancer places, rebalances under skew without losing a request, and survives a restart", async (t) => {
  const modelDir = await makeTinyModel();
  const kvDir = await Deno.makeTempDir();
  const reference = await loadReferenceModel(modelDir);
  const traffic = (await loadDemoTraffic(modelDir))!;
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: {
      SWITCHYARD_STATE__KV: `${kvDir}/state.kv`,
      SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN,
      SWITCHYARD_EXPERT_BALANCER__ADJUST_INTERVAL: "1s",
      SWITCHYARD_EXPERT_BALANCER__WINDOW: "2s",
      SWITCHYARD_EXPERT_BALANCER__THRESHOLD: "0.95",
      // Expert parallelism on a pool where full replication fits (tests/full_replication_test.ts).
      SWITCHYARD_EXPERT_BALANCER__PLACEMENT: "expert_parallel",
    },
  });
  try {
    await t.step("the static plan is placed at start", async () => {
      const plan = await waitFor("initial plan", async () => {
        const body = await planOf(pool.router.url);
        return body.version >= 1 ? body : undefined;
      }, { timeoutMs: 15_000, intervalMs: 200, retryErrors: false });
      assert.equal(plan.backends.length, 2);
      assert.match(plan.reason, /static/);
    });

    await t.step("skewed traffic triggers a rebalance and every answer stays right", async () => {
      const random = createRandom(4);
      const failures: string[] = [];
      let sent = 0;
      let stop = false;
      const loops = Array.from({ length: 3 }, async () => {
        while (!stop) {
          const rows = 1 + (sent++ % 4);
          const tokens = demoTokens(traffic, "code", rows, random);
          const res = await infer(pool.router.url, TINY.name, tokens, TINY.dModel);
          if (res.status !== 200) failures.push(JSON.stringify(res.error));
          else if (
            maxAbsDiff(
              res.decoded!.tensors.get("output")!.data,
              reference.forward(tokens, rows).output,
            ) > 1e-4
          ) {
            failures.push("wrong answer");
          }
        }
      });
      const rebalanced = await waitFor("a rebalance", async () => {
        const body = await planOf(pool.router.url);
        const switched = body.decisions?.find((d: { action: string; outcome: string }) =>
          d.action === "rebalance" && d.outcome === "switched"
        );
        return switched ? { body, switched } : undefined;
      }, { timeoutMs: 30_000, intervalMs: 200, retryErrors: false }).finally(() => stop = true);
      await Promise.all(loops);
      assert.deepEqual(failures, []);
      assert.ok(sent > 20);
      assert.ok(rebalanced.body.version >= 2);
      assert.ok(
        rebalanced.switched.after > rebalanced.switched.before,
        JSON.stringify(rebalanced.switched),
      );
    });

    await t.step("admin endpoints need the admin token", async () => {
      const anonymous = await fetch(`${pool.router.url}/api/plan/preview`, {
        method: "POST",
        body: "{}",
      });
      assert.equal(anonymous.status, 401);
      await anonymous.body?.cancel();
      const preview = await fetch(`${pool.router.url}/api/plan/preview`, {
        method: "POST",
        body: "{}",
        headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      });
      assert.equal(preview.status, 200);
      const body = await preview.json();
      assert.equal(typeof body.current.version, "number");
      assert.ok(Array.isArray(body.proposed.phy2log));
    });

    await t.step("a restarted router continues with the plan in KV", async () => {
      const before = (await planOf(pool.router.url)).version;
      await pool.restartRouter();
      const after = await waitFor("plan after restart", async () => {
        const body = await planOf(pool.router.url);
        return body.version !== null && body.version !== undefined ? body : undefined;
      }, { timeoutMs: 15_000, intervalMs: 200, retryErrors: false });
      assert.ok(after.version >= before, `version ${after.version} < ${before}`);
      assert.doesNotMatch(after.reason, /static/);
    });
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
    await Deno.remove(kvDir, { recursive: true });
  }
});
