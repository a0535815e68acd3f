import assert from "node:assert/strict";
import { ApiError } from "../../shared/errors.ts";
import { loadManifest } from "../server/start_backend.ts";
import { generateModel } from "../../tools/model/generate.ts";
import { createGaussian, createRandom } from "../../tools/model/prng.ts";
import { loadReferenceModel } from "../../tools/model/reference.ts";
import { ReferenceExecutor } from "../../tools/model/reference_executor.ts";
import { MicroBatcher } from "../batching/micro_batcher.ts";
import { adaptivePolicy } from "../batching/policies.ts";
import { MoeEngine } from "./engine.ts";

const bounds = { min: 2, max: 16, maxWaitMs: 2, latencyBudgetMs: 50 };

async function tinyModel() {
  const dir = await Deno.makeTempDir();
  await generateModel(dir, {
    dModel: 16,
    dFf: 24,
    layers: 2,
    experts: 8,
    topK: 2,
    groups: 4,
    topkGroup: 2,
    sharedExperts: 1,
  });
  return dir;
}

Deno.test("MoeEngine.infer() equals the reference forward pass, at any temperature", async () => {
  const dir = await tinyModel();
  const manifest = await loadManifest(dir);
  const reference = await loadReferenceModel(dir);
  const gaussian = createGaussian(createRandom(9));
  try {
    for (const temperature of [1, 0.5, 3]) {
      const engine = new MoeEngine({
        manifest,
        runner: new MicroBatcher({
          executor: new ReferenceExecutor(dir, manifest),
          policy: adaptivePolicy(bounds),
        }),
        temperature,
        maxQueuedRows: 1000,
      });
      const tokens = Float32Array.from({ length: 6 * 16 }, gaussian);
      const got = await engine.infer(tokens, 6);
      const expected = reference.forward(tokens, 6, { temperature });
      assert.deepEqual([...got.expertIds], [...expected.expertIds]);
      for (let i = 0; i < got.output.length; i++) {
        assert.ok(Math.abs(got.output[i]! - expected.output[i]!) <= 1e-5);
      }
      for (let i = 0; i < got.expertWeights.length; i++) {
        assert.ok(Math.abs(got.expertWeights[i]! - expected.expertWeights[i]!) <= 1e-6);
      }
      assert.equal(engine.stats().requests, 1);
      assert.equal(engine.stats().inFlightRows, 0);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MoeEngine refuses work beyond max_queued_rows with 503 and Retry-After", async () => {
  const dir = await tinyModel();
  const manifest = await loadManifest(dir);
  try {
    let release = () => {};
    const gate = new Promise<void>((resolve) => release = resolve);
    const executor = new ReferenceExecutor(dir, manifest);
    const slow = {
      run: async (...args: Parameters<ReferenceExecutor["execute"]>) => {
        await gate;
        return (await executor.execute(...args)).output;
      },
    };
    const engine = new MoeEngine({ manifest, runner: slow, temperature: 1, maxQueuedRows: 10 });
    const first = engine.infer(new Float32Array(8 * 16), 8);
    await assert.rejects(engine.infer(new Float32Array(3 * 16), 3), (error) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, 503);
      assert.equal(error.retryAfterS, 1);
      assert.match(error.message, /backend\.max_queued_rows 10/);
      return true;
    });
    assert.equal(engine.stats().rejected, 1);
    release();
    await first;
    // Capacity is back once the first request finished.
    await engine.infer(new Float32Array(3 * 16), 3);
    assert.equal(engine.stats().requests, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
