/**
 * A backend on the simulated executor says so: in readiness details and on every
 * inference answer. (It is for pool-scale benchmarks; its outputs are not the model's.)
 */
import assert from "node:assert/strict";
import { freePort, startProcess } from "../tools/pool/processes.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

Deno.test("a simulated backend flags its answers and its readiness", async () => {
  const modelDir = await makeTinyModel();
  const port = freePort();
  const backend = await startProcess("gpu-backend/main.ts", {
    url: `http://127.0.0.1:${port}`,
    env: {
      SWITCHYARD_MODEL__DIR: modelDir,
      SWITCHYARD_BACKEND__PORT: String(port),
      SWITCHYARD_BACKEND__EXECUTOR: "simulated",
      SWITCHYARD_LOG__LEVEL: "error",
    },
  });
  try {
    const ready = await (await fetch(`${backend.url}/v2/health/ready`)).json();
    assert.equal(ready.details.execution_provider, "simulated");
    const call = await infer(
      backend.url,
      TINY.name,
      new Float32Array(3 * TINY.dModel).fill(1),
      TINY.dModel,
    );
    assert.equal(call.status, 200);
    assert.equal(call.decoded!.head.parameters?.["simulated"], true);
    assert.deepEqual(call.decoded!.tensors.get("output")!.shape, [3, TINY.dModel]);
  } finally {
    await backend.kill();
    await Deno.remove(modelDir, { recursive: true });
  }
});
