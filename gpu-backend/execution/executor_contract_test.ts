/**
 * The `ExpertExecutor` contract, run against every implementation: per-part
 * onnxruntime sessions on Workers and on the main thread, the pure-TypeScript reference executor and the simulated executor.
 *
 * Implementations flagged `exact` must equal the reference math. The others (the
 * simulator, whose outputs are not model outputs) must still be deterministic: their
 * oracle is a second instance of the same implementation, run one job at a time.
 */
import assert from "node:assert/strict";
import { listModelParts, type ModelPart } from "../../shared/model_manifest.ts";
import { loadManifest } from "../server/start_backend.ts";
import { generateModel } from "../../tools/model/generate.ts";
import { createGaussian, createRandom } from "../../tools/model/prng.ts";
import { ReferenceExecutor } from "../../tools/model/reference_executor.ts";
import { createExecutor } from "./create_executor.ts";
import type { ExpertExecutor } from "./executor.ts";
import { OrtPartExecutor } from "./ort_part_executor.ts";

const D = 12;
const EXPERTS = 4;

interface Implementation {
  name: string;
  /** Whether its outputs equal the reference math (within 1e-5). */
  exact: boolean;
  create: (dir: string) => Promise<ExpertExecutor>;
}

const implementations: Implementation[] = [
  {
    name: "OrtPartExecutor (Workers)",
    exact: true,
    create: async (dir) =>
      await OrtPartExecutor.create({
        modelDir: dir,
        manifest: await loadManifest(dir),
        workers: 2,
        providers: ["cuda", "cpu"],
      }),
  },
  {
    name: "OrtPartExecutor (main thread)",
    exact: true,
    create: async (dir) =>
      await OrtPartExecutor.create({
        modelDir: dir,
        manifest: await loadManifest(dir),
        workers: 0,
        providers: ["cuda", "cpu"],
      }),
  },
  {
    name: "ReferenceExecutor",
    exact: true,
    create: async (dir) => new ReferenceExecutor(dir, await loadManifest(dir)),
  },
  {
    name: "SimulatedExecutor",
    exact: false,
    create: async (dir) =>
      await createExecutor({
        kind: "simulated",
        modelDir: dir,
        manifest: await loadManifest(dir),
        workers: 2,
        providers: [],
        simulated: { fixedMs: 0.2, perRowMs: 0.01 },
      }),
  },
];

function assertClose(got: Float32Array, expected: Float32Array): void {
  assert.equal(got.length, expected.length);
  for (let i = 0; i < got.length; i++) {
    assert.ok(Math.abs(got[i]! - expected[i]!) <= 1e-5, `index ${i}: ${got[i]} vs ${expected[i]}`);
  }
}

for (const { name, exact, create } of implementations) {
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
    const manifest = await loadManifest(dir);
    const reference = new ReferenceExecutor(dir, manifest);
    const oracle = exact ? reference : await create(dir);
    const executor = await create(dir);
    const gaussian = createGaussian(createRandom(3));
    const input = (rows: number) => Float32Array.from({ length: rows * D }, gaussian);
    const sent = { executions: 0, rows: 0, ms: 0 };
    const execute = async (part: ModelPart, x: Float32Array, rows: number) => {
      const execution = await executor.execute(part, x, rows);
      sent.executions++;
      sent.rows += rows;
      sent.ms += execution.ms;
      return execution;
    };
    try {
      await t.step("names a concrete provider and its capacity", () => {
        assert.ok(
          ["cpu", "cuda", "reference", "simulated"].includes(executor.provider),
          executor.provider,
        );
        assert.ok(executor.slots >= 1 && executor.depth >= executor.slots);
      });

      await t.step("every part returns [rows, width] of finite values", async () => {
        for (const part of listModelParts(manifest)) {
          for (const rows of [1, 5]) {
            const { output } = await execute(part, input(rows), rows);
            assert.equal(output.length, rows * (part.kind === "gate" ? EXPERTS : D));
            assert.ok(output.every(Number.isFinite));
          }
        }
      });

      await t.step({
        name: "every part equals the reference math",
        ignore: !exact,
        fn: async () => {
          for (const part of listModelParts(manifest)) {
            for (const rows of [1, 5]) {
              const x = input(rows);
              const expected = (await reference.execute(part, x.slice(), rows)).output;
              assertClose((await execute(part, x.slice(), rows)).output, expected);
            }
          }
        },
      });

      await t.step("concurrent runs each get their own answer", async () => {
        const parts: ModelPart[] = Array.from(
          { length: 24 },
          (_, i) => ({ kind: "expert", layer: 0, expert: i % EXPERTS }),
        );
        const inputs = parts.map(() => input(3));
        const expected: Float32Array[] = [];
        for (const [i, part] of parts.entries()) {
          expected.push((await oracle.execute(part, inputs[i]!.slice(), 3)).output);
        }
        const got = await Promise.all(
          parts.map((p, i) => execute(p, inputs[i]!.slice(), 3).then((e) => e.output)),
        );
        got.forEach((out, i) => assertClose(out, expected[i]!));
      });

      await t.step("counts executions and rows, and is idle when nothing runs", () => {
        const stats = executor.stats();
        assert.equal(stats.executions, sent.executions);
        assert.equal(stats.rows, sent.rows);
        assert.equal(stats.slots, executor.slots);
        // Busy time is the executions' own times, every one counted once.
        assert.ok(sent.ms > 0, `executions took ${sent.ms} ms`);
        assert.ok(
          Math.abs(stats.busyMs - sent.ms) <= 1e-9 * sent.ms,
          `busyMs ${stats.busyMs} vs ${sent.ms} ms reported by the executions`,
        );
        assert.equal(stats.queued, 0);
        assert.equal(stats.running, 0);
      });

      await t.step("rejects a part the model does not have", async () => {
        await assert.rejects(
          executor.execute({ kind: "expert", layer: 3, expert: 0 }, input(1), 1),
        );
        await assert.rejects(
          executor.execute({ kind: "expert", layer: 0, expert: EXPERTS }, input(1), 1),
        );
        await assert.rejects(
          executor.execute({ kind: "shared", layer: 0, expert: 1 }, input(1), 1),
        );
      });
    } finally {
      await executor.close();
      if (oracle !== reference) await oracle.close();
      await Deno.remove(dir, { recursive: true });
    }
    await assert.rejects(executor.execute({ kind: "gate", layer: 0 }, input(1), 1), /closed/);
  });
}
