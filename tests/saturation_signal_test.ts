/**
 * The load signal end to end on real processes: an overload burst against one backend
 * (small admission limit, many concurrent clients) makes `/api/load` report saturation
 * ≥ 0.9 with shedding, the scaling advice ask for more backends and the saturation and
 * shedding alerts fire; the doctor reads the same signal. No timing assertions: the test
 * waits (generously) for the states it expects.
 */
import assert from "node:assert/strict";
import { startPool } from "../tools/pool/processes.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

interface Load {
  pool: {
    saturation: number | null;
    scale: { backends: number; recommended: number; direction: string } | null;
  };
  backends: { saturation: { value: number; shed_s: number | null; bottleneck: string } | null }[];
}

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  assert.equal(response.status, 200, url);
  return await response.json() as T;
}

Deno.test("an overload burst shows as saturation, shedding, scale-up advice and alerts", async () => {
  const modelDir = await makeTinyModel();
  const pool = await startPool({
    modelDir,
    backends: 1,
    env: {
      SWITCHYARD_STATE__KV: ":memory:",
      SWITCHYARD_BACKEND__MAX_QUEUED_ROWS: "16",
      SWITCHYARD_LOG__REQUESTS: "false",
    },
  });
  let stop = false;
  const statuses = new Map<number, number>();
  const tokens = new Float32Array(4 * TINY.dModel).fill(0.5);
  const client = async () => {
    while (!stop) {
      const call = await infer(pool.router.url, TINY.name, tokens, TINY.dModel);
      statuses.set(call.status, (statuses.get(call.status) ?? 0) + 1);
    }
  };
  const clients = Array.from({ length: 48 }, client);
  try {
    // Step 1: wait for the signal and the alerts (at most 60 s on a busy machine).
    const deadline = Date.now() + 60_000;
    let load: Load | undefined;
    let kinds: string[] = [];
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      load = await getJson<Load>(`${pool.router.url}/api/load`);
      const alerts = await getJson<{ active: { kind: string }[] }>(
        `${pool.router.url}/api/alerts`,
      );
      kinds = alerts.active.map((a) => a.kind);
      if (
        (load.pool.saturation ?? 0) >= 0.9 && load.pool.scale?.direction === "up" &&
        kinds.includes("saturation") && kinds.includes("shedding")
      ) break;
    }
    assert.ok(statuses.get(503)! > 0, `some requests were shed: ${JSON.stringify([...statuses])}`);
    assert.ok((load!.pool.saturation ?? 0) >= 0.9, JSON.stringify(load!.backends));
    assert.equal(load!.pool.scale?.direction, "up");
    assert.ok(load!.pool.scale!.recommended > load!.pool.scale!.backends);
    assert.ok(kinds.includes("saturation"), `active alerts ${kinds}`);
    assert.ok(kinds.includes("shedding"), `active alerts ${kinds}`);
    // The doctor reads the same signal: the pool is not below 70 % of its capacity.
    const doctor = await getJson<{ checks: { id: string; answer: string; measured: string }[] }>(
      `${pool.router.url}/api/doctor`,
    );
    const check = doctor.checks.find((c) => c.id === "utilisation")!;
    assert.equal(check.answer, "no", check.measured);
    assert.match(check.measured, /^saturation \d+ %/);
  } finally {
    stop = true;
    await Promise.all(clients);
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
