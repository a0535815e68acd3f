/**
 * Reconciled placement state over real processes: a restarted backend (which comes back
 * with no active plan) is put back on the router's current plan by the load rounds; a
 * router whose KV file was deleted adopts the plan the backends run instead of pushing a
 * static one; a corrupt KV file stops the router at start, or with `state.required:
 * false` leaves it running but not ready, naming the KV.
 */
import assert from "node:assert/strict";
import { spawnEntry, startPool, type TestPool } from "../tools/pool/processes.ts";
import { findSamples, parseExposition } from "../shared/metrics/parse_exposition.ts";
import { makeTinyModel } from "./_support/tiny_model.ts";
import { waitFor, type WaitForOptions } from "./_support/wait_for.ts";

const ADMIN = "test-admin-token-0123456789";

/** Restarts take a while on a busy machine: wait up to a minute, probing every 100 ms. */
const PATIENT: WaitForOptions = { timeoutMs: 60_000, intervalMs: 100, retryErrors: false };

interface RouterPlan {
  version: number | null;
  reason: string;
  decisions: { action: string; outcome: string }[];
}

async function routerPlan(pool: TestPool): Promise<RouterPlan> {
  return await (await fetch(`${pool.router.url}/api/plan`)).json();
}

async function backendActive(pool: TestPool, index: number): Promise<number | null> {
  const response = await fetch(`${pool.backends[index]!.url}/v2/plan`, {
    headers: { authorization: `Bearer ${pool.token}` },
  });
  return (await response.json()).active;
}

/** Removes a KV file with its SQLite write-ahead log (else SQLite replays the log into it). */
async function removeKv(file: string): Promise<void> {
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    await Deno.remove(path).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
  }
}

/** Runs the router until it exits (killed after 60 s, which fails the caller's checks). */
async function runToExit(env: Record<string, string>): Promise<{ code: number; text: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "router/main.ts"],
    cwd: new URL("../", import.meta.url).pathname,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const output = await child.output();
  clearTimeout(timer);
  const decoder = new TextDecoder();
  return { code: output.code, text: decoder.decode(output.stderr) + decoder.decode(output.stdout) };
}

Deno.test("placement state is reconciled: backend restart, empty KV, corrupt KV", async (t) => {
  const modelDir = await makeTinyModel();
  const kvDir = await Deno.makeTempDir();
  const kvFile = `${kvDir}/state.kv`;
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: {
      SWITCHYARD_STATE__KV: kvFile,
      SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN,
      // The static plan first, as an expert-parallel pool starts.
      SWITCHYARD_EXPERT_BALANCER__PLACEMENT: "expert_parallel",
    },
  });
  try {
    await t.step("a restarted backend is put back on the current plan", async () => {
      // An operator's plan: version 2, not the static one the router would make up.
      await waitFor(
        "the static plan",
        async () => (await routerPlan(pool)).version === 1 || undefined,
        PATIENT,
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
      }, PATIENT);
      assert.equal(active, (await routerPlan(pool)).version);
      assert.equal(await backendActive(pool, 0), 2);
      const metrics = parseExposition(await (await fetch(`${pool.router.url}/metrics`)).text());
      const [reconciled] = findSamples(metrics, "switchyard_plan_reconciliations_total", {
        outcome: "reconciled",
      });
      assert.equal(reconciled?.value, 1);
    });

    await t.step("a router on an empty KV adopts the backends' plan", async () => {
      await pool.router.kill();
      await removeKv(kvFile);
      await pool.restartRouter();
      const plan = await waitFor("a current plan", async () => {
        const body = await routerPlan(pool);
        return body.version === null ? undefined : body;
      }, PATIENT);
      assert.equal(plan.version, 2, JSON.stringify(plan));
      assert.doesNotMatch(plan.reason, /static/);
      const adopted = plan.decisions.find((d) => d.action === "adopt");
      assert.equal(adopted?.outcome, "adopted", JSON.stringify(plan.decisions));
      assert.deepEqual([await backendActive(pool, 0), await backendActive(pool, 1)], [2, 2]);
    });

    await t.step(
      "a corrupt KV stops the router; with state.required false it is not ready",
      async () => {
        await pool.router.kill();
        await removeKv(kvFile);
        await Deno.writeTextFile(kvFile, "not a database: what a crashed disk might leave behind");
        const failed = await runToExit(pool.routerEnv());
        assert.equal(failed.code, 1, failed.text);
        assert.ok(failed.text.includes(`Cannot open state KV "${kvFile}"`), failed.text);

        const child = spawnEntry("router/main.ts", {
          env: { ...pool.routerEnv(), SWITCHYARD_STATE__REQUIRED: "false" },
        });
        try {
          const ready = await waitFor("a readiness answer naming the KV", async () => {
            try {
              const response = await fetch(`${pool.router.url}/v2/health/ready`);
              const body = await response.json();
              return body.details?.healthy_backends === 2
                ? { status: response.status, body }
                : undefined;
            } catch {
              return undefined;
            }
          }, PATIENT);
          assert.equal(ready.status, 503);
          assert.equal(ready.body.ready, false);
          assert.equal(ready.body.details.state.ok, false);
          assert.ok(ready.body.details.state.error.includes(`Cannot open state KV "${kvFile}"`));
          // Without state the plan API is off (readiness said why).
          const plan = await fetch(`${pool.router.url}/api/plan`);
          assert.equal(plan.status, 404);
          await plan.body?.cancel();
        } finally {
          child.kill("SIGKILL");
          await child.status;
        }
      },
    );
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
    await Deno.remove(kvDir, { recursive: true });
  }
});
