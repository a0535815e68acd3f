/**
 * Alerts and node resources end to end: a real router and two backends. After some
 * traffic `/api/load` shows each backend's CPU and network rates (and `null`
 * accelerator readings on a host without `nvidia-smi`); killing one backend makes
 * `/api/alerts` list a firing `backend_down` for it.
 */
import assert from "node:assert/strict";
import { startPool } from "../tools/pool/processes.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { waitFor } from "./_support/wait_for.ts";

interface AlertBody {
  id: string;
  kind: string;
  subject: string;
  state: string;
  fired_at: number;
  resolved_at: number | null;
  message: string;
}

async function getJson(url: string) {
  const response = await fetch(url);
  assert.equal(response.status, 200, url);
  return await response.json();
}

async function hasNvidiaSmi(): Promise<boolean> {
  try {
    await new Deno.Command("nvidia-smi", { args: ["-L"], stdout: "null", stderr: "null" })
      .output();
    return true;
  } catch {
    return false;
  }
}

Deno.test("resources in /api/load, and a killed backend is a firing backend_down alert", async () => {
  const modelDir = await makeTinyModel();
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: { SWITCHYARD_ALERTS__RAISE_AFTER: "2", SWITCHYARD_ALERTS__CLEAR_AFTER: "3" },
  });
  try {
    const router = pool.router.url;
    // Step 1: ~2 s of traffic, so two load reports of each backend bracket it.
    const tokens = new Float32Array(4 * TINY.dModel).map((_, i) => Math.sin(i));
    const until = Date.now() + 2200;
    while (Date.now() < until) {
      const call = await infer(router, TINY.name, tokens, TINY.dModel);
      assert.equal(call.status, 200);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Step 2: node resources per backend.
    const load = await waitFor(
      "resource rates of both backends",
      async () => {
        const body = await getJson(`${router}/api/load?detail=replicas`);
        return body.backends.every((b: { cpu_cores: number | null }) => b.cpu_cores !== null)
          ? body
          : undefined;
      },
      { timeoutMs: 5000, intervalMs: 200, retryErrors: false },
    );
    const gpu = await hasNvidiaSmi();
    for (const backend of load.backends) {
      assert.ok(backend.cpu_cores > 0, `${backend.name} cpu_cores ${backend.cpu_cores}`);
      // Every backend answers the router's load report every round: bytes sent, always.
      assert.ok(backend.net_tx_bytes_s > 0, `${backend.name} net_tx ${backend.net_tx_bytes_s}`);
      assert.equal(typeof backend.net_rx_bytes_s, "number", "rx rate reported, not null");
      if (!gpu) {
        assert.equal(backend.accelerator, null, "no nvidia-smi here: n/a, never a number");
        assert.equal(backend.power_w, null);
      }
      assert.equal(backend.layers.length, TINY.layers);
      assert.equal(backend.layers[0].expert_tokens_s.length, TINY.experts);
    }
    const traffic = load.backends.reduce(
      (sum: number, b: { net_rx_bytes_s: number; net_tx_bytes_s: number }) =>
        sum + b.net_rx_bytes_s + b.net_tx_bytes_s,
      0,
    );
    assert.ok(traffic > 0, "inference bodies were counted");
    const before = await getJson(`${router}/api/alerts`);
    assert.equal(
      before.active.some((a: AlertBody) => a.kind === "backend_down"),
      false,
      JSON.stringify(before.active),
    );

    // Step 3: kill backend-2; within a few rounds it is a firing backend_down.
    await pool.backends[1]!.kill();
    const down = await waitFor(
      "a backend_down alert for backend-2",
      async () => {
        const body = await getJson(`${router}/api/alerts`);
        return body.active.find((a: AlertBody) =>
          a.kind === "backend_down" && a.subject === "backend-2"
        ) as AlertBody | undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200, retryErrors: false },
    );
    assert.equal(down.state, "firing");
    assert.equal(down.resolved_at, null);
    assert.match(down.message, /^Backend backend-2 \(127\.0\.0\.1:\d+\) is down: /);
    const after = await getJson(`${router}/api/alerts`);
    assert.ok(after.recent.some((a: AlertBody) => a.id === down.id), "listed in recent too");
    assert.equal(
      after.active.some((a: AlertBody) => a.kind === "backend_down" && a.subject === "backend-1"),
      false,
    );
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
