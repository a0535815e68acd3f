/**
 * The `ExpertExecutor` contract, run against every implementation: the onnxruntime
 * Worker pool and the pure-TypeScript reference executor.
 */
import assert from "node:assert/strict";
import { listModelParts, type ModelPart } from "../../shared/model_manifest.ts";
import { loadManifest } from "../server/start_backend.ts";
import { generateModel } from "../../tools/model/generate.ts";
import { createGaussian, createRandom } from "../../tools/model/prng.ts";
import { ReferenceExecutor } from "../../tools/model/reference_executor.ts";
import type { ExpertExecutor } from "./executor.ts";
import { OrtExecutorPool } from "./ort_executor_pool.ts";

const D = 12;
const EXPERTS = 4;

const implementations: [string, (dir: string) => Promise<ExpertExecutor>][] = [
  ["OrtExecutorPool", async (dir) =>
    await OrtExecutorPool.create({
      modelDir: dir,
      manifest: await loadManifest(dir),
      workers: 2,
      providers: ["cuda", "cpu"],
    })],
  ["ReferenceExecutor", async (dir) => new ReferenceExecutor(dir, await loadManifest(dir))],
];

for (const [name, create] of implementations) {
  Deno.test(`${name} satisfies the executor contract`, async (t) => {
    const dir = await Deno.makeTempDir();
    await generateModel(dir, {
      dModel: D,
      dFf: 16,
      layers: 1,
      experts: EXPERTS,
      groups: 1,
      topkGroup: 1,
      sharedExperts: 1,
    });
    const reference = new ReferenceExecutor(dir, await loadManifest(dir));
    const executor = await create(dir);
    const gaussian = createGaussian(createRandom(3));
    const input = (rows: number) => Float32Array.from({ length: rows * D }, gaussian);
    try {
      await t.step("names a concrete provider and its capacity", () => {
        assert.ok(["cpu", "cuda", "reference"].includes(executor.provider), executor.provider);
        assert.ok(executor.slots >= 1 && executor.depth >= executor.slots);
      });

      await t.step("every part returns [rows, width] equal to the reference math", async () => {
        for (const part of listModelParts(await loadManifest(dir))) {
          for (const rows of [1, 5]) {
            const x = input(rows);
            const expected = (await reference.execute(part, x.slice(), rows)).output;
            const { output: got, ms } = await executor.execute(part, x.slice(), rows);
            assert.ok(ms >= 0);
            assert.equal(got.length, rows * (part.kind === "gate" ? EXPERTS : D));
            for (let i = 0; i < got.length; i++) {
              assert.ok(Math.abs(got[i]! - expected[i]!) <= 1e-5);
            }
          }
        }
      });

      await t.step("concurrent runs each get their own answer", async () => {
        const parts: ModelPart[] = Array.from(
          { length: 24 },
          (_, i) => ({ kind: "expert", layer: 0, expert: i % EXPERTS }),
        );
        const inputs = parts.map(() => input(3));
        const expected = await Promise.all(
          parts.map((p, i) => reference.execute(p, inputs[i]!.slice(), 3).then((e) => e.output)),
        );
        const got = await Promise.all(
          parts.map((p, i) => executor.execute(p, inputs[i]!.slice(), 3).then((e) => e.output)),
        );
        got.forEach((out, i) => {
          for (let j = 0; j < out.length; j++) {
            assert.ok(Math.abs(out[j]! - expected[i]![j]!) <= 1e-5);
          }
        });
      });

      await t.step("counts executions and rows", () => {
        const stats = executor.stats();
        assert.ok(stats.executions >= 24 + 2 * 6);
        assert.ok(stats.rows >= 72);
        assert.ok(stats.slots >= 1);
      });

      await t.step("rejects a part the model does not have", async () => {
        await assert.rejects(
          executor.execute({ kind: "expert", layer: 3, expert: 0 }, input(1), 1),
        );
      });
    } finally {
      await executor.close();
      await Deno.remove(dir, { recursive: true });
    }
    await assert.rejects(executor.execute({ kind: "gate", layer: 0 }, input(1), 1), /closed/);
  });
}
