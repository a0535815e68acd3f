/**
 * The edge entry under Deno Deploy's permission model, started as documented:
 * `deno task edge --port N` (`deno run --allow-net --allow-env router/edge_serve.ts`, which
 * serves `router/edge.ts`) — no read, write or subprocess permission — with
 * `state.kv=:memory:`, in front of a real backend process. Checks that `--port` is
 * honoured, inference, the dashboard (served from the build-time bundle), the cron
 * handler (through its HTTP trigger) and the admin API; and that without a usable
 * `state.kv` it stops with one line naming the setting, not a stack trace.
 */
import assert from "node:assert/strict";
import { createRandom } from "../tools/model/prng.ts";
import { freePort, startProcess, waitReady } from "../tools/pool/processes.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const TOKEN = "test-internal-token-0123456789";
const ADMIN = "test-admin-token-0123456789";
/** Exactly the permissions the edge entry runs with (the closing note cites this line). */
export const EDGE_PERMISSIONS = ["--allow-net", "--allow-env"];

Deno.test("deno task edge runs with exactly net + env, and names the setting when state.kv is a file", async () => {
  const { tasks } = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  assert.equal(tasks.edge, `deno run ${EDGE_PERMISSIONS.join(" ")} router/edge_serve.ts`);
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["task", "edge", "--port", String(freePort())],
    cwd: ROOT,
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 1, stderr);
  assert.match(
    stderr,
    /^Invalid config: state\.kv: "data\/switchyard\.kv" is a file.*SWITCHYARD_STATE__KV/m,
  );
  assert.doesNotMatch(stderr, /\bat (file|async|ext):/, "no stack trace");
});

Deno.test("the edge entry serves inference, dashboard, cron and admin API with only net + env", async () => {
  const modelDir = await makeTinyModel();
  const port = freePort();
  const backend = await startProcess("gpu-backend/main.ts", {
    url: `http://127.0.0.1:${port}`,
    token: TOKEN,
    env: {
      SWITCHYARD_MODEL__DIR: modelDir,
      SWITCHYARD_AUTH__INTERNAL_TOKEN: TOKEN,
      SWITCHYARD_BACKEND__PORT: String(port),
      SWITCHYARD_BACKEND__EXECUTORS: "1",
      SWITCHYARD_LOG__DIR: "",
      SWITCHYARD_LOG__LEVEL: "warn",
    },
  });
  const edgePort = freePort();
  const edge = new Deno.Command(Deno.execPath(), {
    args: ["task", "edge", "--host", "127.0.0.1", "--port", String(edgePort)],
    cwd: ROOT,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: Deno.env.get("HOME") ?? "",
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
      SWITCHYARD_STATE__KV: ":memory:",
      SWITCHYARD_ROUTER__BACKENDS: JSON.stringify([backend.url]),
      SWITCHYARD_ROUTER__HEALTH_INTERVAL: "200ms",
      SWITCHYARD_AUTH__INTERNAL_TOKEN: TOKEN,
      SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const url = `http://127.0.0.1:${edgePort}`;
  const output = Promise.all([edge.stdout, edge.stderr].map((s) => new Response(s).text()));
  try {
    await waitReady(url, edge);
    const admin = { authorization: `Bearer ${ADMIN}` };

    // Inference through the router.
    const random = createRandom(3);
    const tokens = Float32Array.from({ length: 3 * TINY.dModel }, () => random() - 0.5);
    const call = await infer(url, TINY.name, tokens, TINY.dModel, { requestType: "chat" });
    assert.equal(call.status, 200, JSON.stringify(call.error));
    assert.deepEqual(call.decoded!.tensors.get("output")!.shape, [3, TINY.dModel]);

    // The dashboard and ECharts, from the bundle (no file reads).
    const page = await fetch(`${url}/dashboard`);
    assert.equal(page.status, 200);
    const html = await page.text();
    const echartsPath = /"(\/dashboard\/assets\/echarts\.js\?v=[^"]+)"/.exec(html)?.[1];
    assert.ok(echartsPath, "the page names its ECharts URL");
    const echarts = await fetch(`${url}${echartsPath}`);
    assert.equal(echarts.status, 200);
    assert.ok((await echarts.text()).length > 500_000);
    for (const path of ["/dashboard/analysis", "/dashboard/static/dashboard.js"]) {
      const response = await fetch(`${url}${path}`);
      assert.equal(response.status, 200, path);
      await response.body?.cancel();
    }

    // The cron handler: refused without the admin token, runs (on the leader) with it.
    const anonymous = await fetch(`${url}/api/cron/prewarm`, { method: "POST" });
    assert.equal(anonymous.status, 401);
    await anonymous.body?.cancel();
    const cron = await fetch(`${url}/api/cron/prewarm`, { method: "POST", headers: admin });
    assert.deepEqual(await cron.json(), { cron: "prewarm", result: "ran" });
    const prewarm = await (await fetch(`${url}/api/prewarm`)).json();
    assert.ok(prewarm.decisions.length >= 1);

    // The admin API writes shared state (KV) and refuses anonymous changes.
    const event = {
      name: "launch",
      start: new Date(Date.now() + 3_600_000).toISOString(),
      end: new Date(Date.now() + 7_200_000).toISOString(),
      multiplier: 3,
    };
    const denied = await fetch(`${url}/api/events`, {
      method: "POST",
      body: JSON.stringify(event),
    });
    assert.equal(denied.status, 401);
    await denied.body?.cancel();
    const created = await fetch(`${url}/api/events`, {
      method: "POST",
      headers: { ...admin, "content-type": "application/json" },
      body: JSON.stringify(event),
    });
    assert.equal(created.status, 201, await created.clone().text());
    await created.body?.cancel();
    const leader = await (await fetch(`${url}/api/leader`)).json();
    assert.equal(leader.leader, true);
  } finally {
    // SIGTERM: the entry stops the router and exits (timers would keep it alive otherwise).
    edge.kill("SIGTERM");
    const stopped = await Promise.race([
      edge.status.then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 20_000)),
    ]);
    if (!stopped) edge.kill("SIGKILL");
    await edge.status;
    assert.ok(stopped, "the edge entry exits on SIGTERM");
    await backend.kill();
    await Deno.remove(modelDir, { recursive: true });
  }
  const [stdout = "", stderr = ""] = await output;
  // Logs are JSON lines on stdout; nothing asked for a permission it lacks.
  assert.match(stdout, /"msg":"router listening".*"entry":"edge"/);
  assert.doesNotMatch(
    stdout + stderr,
    /NotCapable|PermissionDenied|Requires (read|write|run) access/,
  );
});
