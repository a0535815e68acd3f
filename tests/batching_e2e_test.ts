/**
 * Micro-batching on a real backend: concurrent requests coalesce into batches larger
 * than one, and every answer equals the answer to the same request sent alone.
 */
import assert from "node:assert/strict";
import { createRandom } from "../tools/model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { infer, maxAbsDiff } from "./_support/client.ts";
import { startPool } from "../tools/pool/processes.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

Deno.test("concurrent requests are batched and answered exactly as unbatched", async () => {
  const modelDir = await makeTinyModel();
  const traffic = (await loadDemoTraffic(modelDir))!;
  const pool = await startPool({ modelDir, backends: 1 });
  const backend = pool.backends[0]!.url;
  const auth = { authorization: `Bearer ${pool.token}` };
  try {
    const random = createRandom(5);
    const types = ["chat", "code", "math"];
    const requests = Array.from({ length: 48 }, (_, i) => {
      const rows = 1 + (i % 5);
      return { rows, tokens: demoTokens(traffic, types[i % 3]!, rows, random) };
    });
    // Alone: one at a time, so nothing can be coalesced.
    const alone: Float32Array[] = [];
    for (const r of requests) {
      const call = await infer(backend, TINY.name, r.tokens, TINY.dModel, { headers: auth });
      assert.equal(call.status, 200);
      alone.push(call.decoded!.tensors.get("output")!.data as Float32Array);
    }
    const before = await batchStats(backend, auth);
    // Together: all in flight at once.
    const together = await Promise.all(
      requests.map((r) =>
        infer(backend, TINY.name, r.tokens, TINY.dModel, {
          headers: auth,
          binaryInput: true,
          binaryOutputs: true,
        })
      ),
    );
    together.forEach((call, i) => {
      assert.equal(call.status, 200);
      const output = call.decoded!.tensors.get("output")!.data;
      assert.ok(maxAbsDiff(output, alone[i]!) <= 1e-5, `request ${i}`);
    });
    const after = await batchStats(backend, auth);
    assert.ok(before.largest === 1, `sequential traffic formed batches of ${before.largest}`);
    assert.ok(after.largest > 1, "concurrent traffic formed batches larger than 1");
    assert.ok(after.largest <= 16, "never above batching.max");
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});

async function batchStats(url: string, headers: Record<string, string>) {
  const response = await fetch(`${url}/v2/health/ready`, { headers });
  const body = await response.json();
  const parts: { formedBatches: number[] }[] = body.details.batching.parts;
  let largest = 0;
  for (const part of parts) {
    part.formedBatches.forEach((count, size) => {
      if (count > 0) largest = Math.max(largest, size);
    });
  }
  return { largest };
}
