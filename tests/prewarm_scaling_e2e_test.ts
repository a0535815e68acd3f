/**
 * The `local` scaler on real processes, in both directions: a router (in this process, its
 * pre-warm job run by the test instead of its per-minute cron) over two backend processes
 * and the launcher's scalable backends behind its control API. An operator schedules a 5×
 * event; one lead time ahead the job asks the launcher for a third backend, which starts
 * (after an injected 3 s cold start), joins the pool as standby with the event's placement
 * staged, takes traffic only once the event starts, and after the event and the hold is
 * drained, removed from the pool and stopped. No request fails throughout.
 *
 * Asserts states, never timings; waits are generous polls.
 */
import assert from "node:assert/strict";
import { resolveConfig } from "../shared/config.ts";
import { MemoryLogger } from "../shared/logging/memory_logger.ts";
import { hostedExperts, type PlacementPlan } from "../shared/placement_plan.ts";
import { startRouter } from "../router/wire/server.ts";
import { PlanStore } from "../router/control/balancer/plan_store.ts";
import { createRandom } from "../tools/model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { freePort, spawnEntry, startProcess, waitReady } from "../tools/pool/processes.ts";
import { serveLauncherControl } from "../tools/pool/launcher_control.ts";
import { ScalableBackends } from "../tools/pool/scalable_backends.ts";
import { childHandle, Supervisor } from "../tools/pool/supervisor.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { waitFor } from "./_support/wait_for.ts";

const TOKEN = "prewarm-scaling-internal-token-0123";
const ADMIN = "prewarm-scaling-admin-token-0123456";

Deno.test("the local scaler starts a backend ahead of an event (standby, placement staged), activates it at the event, then drains and stops it", async () => {
  const modelDir = await makeTinyModel();
  const traffic = (await loadDemoTraffic(modelDir))!;
  const env = {
    SWITCHYARD_MODEL__DIR: modelDir,
    SWITCHYARD_AUTH__INTERNAL_TOKEN: TOKEN,
    SWITCHYARD_LOG__LEVEL: "warn",
    SWITCHYARD_LOG__DIR: "",
  };
  const ports = [freePort(), freePort()];
  const first = await Promise.all(ports.map((port, i) =>
    startProcess("gpu-backend/main.ts", {
      url: `http://127.0.0.1:${port}`,
      token: TOKEN,
      env: {
        ...env,
        SWITCHYARD_BACKEND__PORT: String(port),
        SWITCHYARD_BACKEND__ID: `backend-${i + 1}`,
      },
    })
  ));
  const lines: string[] = [];
  const scalable = new ScalableBackends({
    basePort: freePort(),
    injectedColdStartMs: 3_000,
    log: (line) => lines.push(line),
    spawn: (name, port) =>
      childHandle(spawnEntry("gpu-backend/main.ts", {
        env: { ...env, SWITCHYARD_BACKEND__PORT: String(port), SWITCHYARD_BACKEND__ID: name },
      })),
    ready: (url, child) => waitReady(url, child, { token: TOKEN }),
  });
  for (const [i, backend] of first.entries()) {
    // The launcher's first backends (already running): supervised by name only here.
    const supervisor = new Supervisor({
      name: `backend-${i + 1}`,
      spawn: () => childHandle(backend.child),
      ready: () => Promise.resolve(),
      log: () => {},
    });
    await supervisor.start();
    scalable.adopt(`backend-${i + 1}`, backend.url, supervisor);
  }
  const control = serveLauncherControl(scalable, { token: TOKEN });
  const kv = await Deno.openKv(":memory:");
  const logger = new MemoryLogger();
  const router = await startRouter(
    resolveConfig({
      env: {
        ...env,
        SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN,
        SWITCHYARD_ROUTER__HOST: "127.0.0.1",
        SWITCHYARD_ROUTER__PORT: "0",
        SWITCHYARD_ROUTER__BACKENDS: JSON.stringify(first.map((b) => b.url)),
        SWITCHYARD_ROUTER__HEALTH_INTERVAL: "300ms",
        SWITCHYARD_ROUTER__HEALTH_TIMEOUT: "5s",
        SWITCHYARD_PREWARM__SCALER: "local",
        SWITCHYARD_PREWARM__LAUNCHER_URL: control.url,
        // Capacity known (as from a benchmark): 40 tokens/s per backend at threshold 0.8.
        SWITCHYARD_PREWARM__CAPACITY_PER_BACKEND: "40",
        SWITCHYARD_PREWARM__LEAD_TIME: "40s",
        SWITCHYARD_PREWARM__TRACK_INTERVAL: "500ms",
        SWITCHYARD_PREWARM__SCALE_DOWN_HOLD: "2s",
      },
    }),
    { kv, logger, registerCron: false, loadIntervalMs: 500 },
  );
  const random = createRandom(5);
  let running = true;
  let failed = 0;
  let sent = 0;
  // ~6 requests/s of 3 rows (about 18 tokens/s: 2 backends at 40 × 0.8 hold it).
  const load = (async () => {
    while (running) {
      const type = random() < 0.5 ? "chat" : "code";
      const call = await infer(
        router.url,
        TINY.name,
        demoTokens(traffic, type, 3, random),
        TINY.dModel,
        {
          requestType: type,
        },
      );
      sent++;
      if (call.status !== 200) failed++;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  })();
  const prewarm = async () => {
    await router.runCron();
    return await (await fetch(`${router.url}/api/prewarm?limit=1`)).json();
  };
  const plans = new PlanStore(kv);
  const plan = (): Promise<PlacementPlan | null> => plans.current(TINY.name);
  try {
    await waitFor(
      "both backends described and a plan in force",
      async () => (await plan()) !== null,
      {
        timeoutMs: 60_000,
      },
    );
    // An event 25 s from now: 5× the traffic (~90 tokens/s) needs 3 backends by its start.
    const start = Date.now() + 25_000;
    const created = await fetch(`${router.url}/api/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({
        name: "promo",
        start: new Date(start).toISOString(),
        end: new Date(start + 12_000).toISOString(),
        multiplier: 5,
        mix: { code: 1 },
      }),
    });
    assert.equal(created.status, 201, await created.text());
    // Step 1: the job asks the launcher for a third backend, ready by the event's start.
    const asked = await waitFor("a contract for 3 backends", async () => {
      const body = await prewarm();
      return body.contract?.target >= 3 ? body : undefined;
    }, { timeoutMs: 30_000 });
    assert.equal(asked.contract.readyBy, start);
    assert.equal(asked.desired_backends, asked.contract.target);
    // Step 2: it starts, joins as standby (no requests) with the event placement staged.
    const standby = await waitFor(
      "the new backend ready as standby with a staged plan",
      async () => {
        await prewarm();
        const view = router.pool.views().find((v) => !first.some((b) => b.url === v.url));
        const body = await (await fetch(`${router.url}/api/prewarm`)).json();
        return view?.role === "standby" && view.healthy &&
            body.contract?.stagedBackends.includes(view.name)
          ? { view, staged: body.contract.stagedVersion as number }
          : undefined;
      },
      { timeoutMs: 60_000, detail: () => lines.join("\n") },
    );
    assert.ok(Date.now() < start, "ready and staged before the event");
    const before = await plan();
    assert.ok(
      !before!.backends.some((b) => b.id === standby.view.name),
      "not in the plan in force",
    );
    const status = await (await fetch(`${standby.view.url}/v2/plan`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    })).json();
    assert.deepEqual([status.active, status.staged], [null, standby.staged]);
    // Step 3: at the event it joins with its expert set: the staged version is the plan.
    const activated = await waitFor("the staged version in force", async () => {
      const body = await prewarm();
      const current = await plan();
      return body.contract?.activatedAt != null && current?.version === body.contract.stagedVersion
        ? current
        : undefined;
    }, {
      timeoutMs: 60_000,
      detail: () =>
        JSON.stringify(
          logger.records.filter((r) =>
            /capacity|plan switched|balancer decision|backend role/.test(r.msg)
          ).map((r) => [r.msg, r.fields]),
        ),
    });
    assert.ok(hostedExperts(activated!, standby.view.name).some((layer) => layer.length > 0));
    assert.equal(router.pool.views().find((v) => v.url === standby.view.url)?.role, "active");
    const measured = await (await fetch(`${router.url}/api/prewarm`)).json();
    assert.equal(measured.lead.source, "measured");
    assert.ok(measured.cold_starts.length >= 1 && measured.cold_starts[0].readyMs >= 3_000);
    // Step 4: after the event and the hold: drained, removed, stopped by the launcher.
    await waitFor("the backend drained, removed and stopped", async () => {
      await prewarm();
      const member = router.pool.views().some((v) => v.url === standby.view.url);
      const launched = scalable.list().backends.some((b) => b.url === standby.view.url);
      return !member && !launched;
    }, { timeoutMs: 90_000, detail: () => lines.join("\n") });
    const drained = logger.find("backend role changed").map((r) => r.fields["to"]);
    assert.ok(drained.includes("draining"), JSON.stringify(drained));
    assert.equal((await (await fetch(`${router.url}/api/prewarm`)).json()).desired_backends, 2);
  } finally {
    running = false;
    await load;
    await router.close();
    await control.close();
    await scalable.close();
    await Promise.all(first.map((b) => b.kill()));
    kv.close();
    await Deno.remove(modelDir, { recursive: true });
  }
  assert.ok(sent > 50, `${sent} requests`);
  assert.equal(failed, 0, "requests failed while backends came and went");
});
