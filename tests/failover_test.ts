/**
 * A backend killed mid-test: requests keep succeeding on the other backend, and the
 * router's health checks take the dead one out of rotation.
 */
import assert from "node:assert/strict";
import { infer } from "./_support/client.ts";
import { startPool } from "../tools/pool/processes.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

Deno.test("a killed backend is taken out of rotation and nothing fails", async () => {
  const modelDir = await makeTinyModel();
  const pool = await startPool({ modelDir, backends: 2 });
  try {
    const tokens = new Float32Array(4 * TINY.dModel).fill(0.25);
    const warm = await infer(pool.router.url, TINY.name, tokens, TINY.dModel);
    assert.equal(warm.status, 200);

    await pool.backends[0]!.kill();
    // Right after the kill (before any health check noticed), every request still succeeds.
    const served = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const call = await infer(pool.router.url, TINY.name, tokens, TINY.dModel);
      assert.equal(call.status, 200, JSON.stringify(call.error));
      served.add(call.headers.get("x-switchyard-backend")!);
    }
    assert.deepEqual([...served], ["backend-2"]);

    // Health checks (200 ms interval) report one healthy backend of two.
    let details: Record<string, unknown> = {};
    for (let i = 0; i < 50; i++) {
      const response = await fetch(`${pool.router.url}/v2/health/ready`);
      details = (await response.json()).details ?? {};
      if (details["healthy_backends"] === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(details["healthy_backends"], 1, JSON.stringify(details));
    assert.equal(details["total_backends"], 2);
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
