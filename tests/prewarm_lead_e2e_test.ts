/**
 * The pre-warm lead window on real processes: with skewed traffic flowing through a router
 * and two backends, an operator schedules a 5× event whose lead window has already begun;
 * the router's own cron (`Deno.cron`, every minute, leader only) runs the pre-warm job,
 * which names the event as its trigger, predicts the event's volume for the event's
 * request mix, and opens a capacity contract for it (the advisory scaler adds nothing, so
 * the contract reports that its deadline will be missed).
 *
 * Waits for the cron (up to about three minutes on a busy machine); asserts no timing.
 */
import assert from "node:assert/strict";
import { createRandom } from "../tools/model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { startPool } from "../tools/pool/processes.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

const ADMIN = "prewarm-lead-admin-token-0123456789";

interface Decision {
  trigger: string;
  outcome: string;
  reason: string;
  predicted: { tokensPerS: number; events: string[]; mix: Record<string, number> } | null;
  capacityPlan: { target: number; readyBy: number | null } | null;
  contract: { status: string; target: number } | null;
}

Deno.test("a scheduled event's lead window makes the router's cron pre-warm for it", async () => {
  const modelDir = await makeTinyModel();
  const traffic = (await loadDemoTraffic(modelDir))!;
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: {
      SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN,
      SWITCHYARD_LOG__REQUESTS: "false",
      // Known capacity (as from a benchmark), so the run does not wait for a load estimate.
      SWITCHYARD_PREWARM__CAPACITY_PER_BACKEND: "40",
    },
  });
  const url = pool.router.url;
  let running = true;
  const random = createRandom(7);
  // Traffic of two request types until the job has acted: affinity and volume to forecast.
  const load = (async () => {
    let failed = 0;
    while (running) {
      const type = random() < 0.8 ? "chat" : "code";
      const call = await infer(url, TINY.name, demoTokens(traffic, type, 3, random), TINY.dModel, {
        requestType: type,
      });
      if (call.status !== 200) failed++;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return failed;
  })();
  try {
    // A 5× "code" promotion starting in 20 minutes; its 30-minute lead window has begun.
    const start = Date.now() + 20 * 60_000;
    const created = await fetch(`${url}/api/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({
        name: "promo",
        start: new Date(start).toISOString(),
        end: new Date(start + 60 * 60_000).toISOString(),
        multiplier: 5,
        mix: { code: 1 },
        lead_time: "30m",
      }),
    });
    assert.equal(created.status, 201, await created.text());
    // The cron runs on the minute; the first run may find no affinity flushed yet (skipped).
    let found: Decision | undefined;
    let decisions: Decision[] = [];
    const deadline = Date.now() + 200_000;
    while (Date.now() < deadline && found === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const body = await (await fetch(`${url}/api/prewarm`)).json();
      decisions = body.decisions;
      found = decisions.find((d) => d.trigger === "event_lead" && d.outcome === "planned");
    }
    // On failure, what the job decided instead (outcome, trigger, reason of each run).
    const seen = decisions.map(({ outcome, trigger, reason }) => ({ outcome, trigger, reason }));
    assert.ok(found, `no pre-warm run for the event's lead window: ${JSON.stringify(seen)}`);
    assert.match(found.reason, /event "promo" needs \d+ backends/);
    assert.deepEqual(found.predicted!.events, ["promo"]);
    assert.deepEqual(found.predicted!.mix, { code: 1 }, "planned for the event's mix");
    assert.ok(found.predicted!.tokensPerS > 0);
    assert.equal(found.capacityPlan!.readyBy, start);
    assert.ok(found.capacityPlan!.target > 2, JSON.stringify(found.capacityPlan));
    assert.equal(found.contract?.status, "at_risk", "the advisory scaler adds nothing");
  } finally {
    running = false;
    const failed = await load;
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
    assert.equal(failed, 0, "requests failed while the job ran");
  }
});
