/**
 * `deno task advise --apply replacement` end to end on real processes: with the balancer
 * disabled (operator-driven placement) and skewed traffic, the advisor recommends a
 * re-placement; the CLI applies it; the plan version changes, the router writes the
 * audit line and the plan switch (trigger `admin`), and the predicted worst-layer
 * balancedness under the observed load improves.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { staticPlan } from "../shared/placement_plan.ts";
import { createRandom } from "../tools/model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { startPool } from "../tools/pool/processes.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

const ADMIN = "advise-apply-admin-token-0123456789";

interface PlanBody {
  version: number | null;
  layers: { predicted_balancedness: number | null }[];
  decisions: { trigger: string; action: string; outcome: string; version: number | null }[];
}

function worst(plan: PlanBody): number {
  return Math.min(...plan.layers.map((l) => l.predicted_balancedness ?? 1));
}

Deno.test("advise --apply replacement switches the plan live, audited, and balances better", async () => {
  const modelDir = await makeTinyModel();
  const logDir = await Deno.makeTempDir({ prefix: "switchyard-advise-logs-" });
  const traffic = (await loadDemoTraffic(modelDir))!;
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: {
      SWITCHYARD_EXPERT_BALANCER__ENABLED: "false",
      SWITCHYARD_EXPERT_BALANCER__THRESHOLD: "0.99",
      SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN,
      SWITCHYARD_LOG__LEVEL: "info",
      SWITCHYARD_LOG__REQUESTS: "false",
      SWITCHYARD_LOG__DIR: logDir,
    },
  });
  const url = pool.router.url;
  const admin = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
  try {
    // Step 1: an operator's first plan — the static placement (2 layers × 10 slots).
    const fixed = staticPlan({
      model: TINY.name,
      layers: TINY.layers,
      experts: TINY.experts,
      backends: [{ id: "a", url: "http://a" }, { id: "b", url: "http://b" }],
      slotsPerBackend: 5,
    });
    let first: Response | undefined;
    const ready = Date.now() + 30_000;
    while (Date.now() < ready) {
      first = await fetch(`${url}/api/plan/apply`, {
        method: "POST",
        headers: admin,
        body: JSON.stringify({ phy2log: fixed.layers.map((l) => l.phy2log) }),
      });
      if (first.status === 200) break;
      await first.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    assert.equal(first?.status, 200, await first?.text());
    // Step 2: skewed traffic until the advisor recommends a re-placement.
    const random = createRandom(3);
    let replacement: { recommended: boolean; expected_effect: string } | undefined;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      for (let i = 0; i < 15; i++) {
        const call = await infer(
          url,
          TINY.name,
          demoTokens(traffic, "code", 4, random),
          TINY.dModel,
          {
            requestType: "code",
          },
        );
        assert.equal(call.status, 200);
      }
      const advice = await (await fetch(`${url}/api/advice?refresh=1`)).json();
      replacement = advice.advice.find((a: { id: string }) => a.id === "replacement");
      if (replacement?.recommended) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    assert.equal(replacement?.recommended, true, JSON.stringify(replacement));
    const before: PlanBody = await (await fetch(`${url}/api/plan`)).json();
    // Step 3: the CLI applies it.
    const cli = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "tools/advise.ts", "--url", url, "--apply", "replacement"],
      env: { SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(cli.stdout);
    assert.equal(cli.code, 0, new TextDecoder().decode(cli.stderr));
    assert.equal(JSON.parse(out).applied, "replacement");
    // Step 4: a new version, recorded as an operator's, predicted to balance better.
    const after: PlanBody = await (await fetch(`${url}/api/plan`)).json();
    assert.ok(after.version! > before.version!, `${before.version} → ${after.version}`);
    // The operator's switch (a balancer evaluation may have recorded "kept" since, under load).
    const decision = after.decisions.find((d) => d.trigger === "admin")!;
    assert.deepEqual(
      [decision.trigger, decision.action, decision.outcome, decision.version],
      ["admin", "apply", "switched", after.version],
    );
    assert.ok(worst(after) > worst(before), `worst layer ${worst(before)} → ${worst(after)}`);
    // Step 5: the audit trail in the router's log file.
    let lines: Record<string, unknown>[] = [];
    const logged = Date.now() + 10_000;
    while (Date.now() < logged) {
      const text = await Deno.readTextFile(join(logDir, "router.log")).catch(() => "");
      lines = text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
      if (lines.some((l) => l["what"] === "apply advice")) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(lines.some((l) =>
      l["msg"] === "admin action" && l["what"] === "apply advice" &&
      l["id"] === "replacement"
    ));
    assert.ok(lines.some((l) =>
      l["event"] === "plan_switch" && l["trigger"] === "admin" &&
      l["version"] === after.version
    ));
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
    await Deno.remove(logDir, { recursive: true });
  }
});
