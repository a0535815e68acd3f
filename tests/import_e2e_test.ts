/**
 * Import → serve → compare, for every family: a tiny synthetic Hugging Face checkpoint in
 * the family's exact tensor naming is imported with `deno task import`'s code, served by a
 * real backend process, and its answers are compared with an independent forward pass of
 * the checkpoint's MoE blocks written for this test (`_support/hf_moe_forward.ts`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { main as importMain } from "../tools/import/main.ts";
import { FAMILIES } from "../tools/import/families.ts";
import { syntheticCheckpoint, writeCheckpoint } from "../tools/import/synthetic_checkpoint.ts";
import { createGaussian, createRandom } from "../tools/model/prng.ts";
import { freePort, type PoolProcess, startProcess } from "../tools/pool/processes.ts";
import { infer } from "./_support/client.ts";
import { hfMoeForward } from "./_support/hf_moe_forward.ts";

const TOKEN = "test-internal-token-0123456789";

Deno.test("imported checkpoints of every family serve exactly their MoE blocks", async (t) => {
  const root = await Deno.makeTempDir({ prefix: "switchyard-import-" });
  const backends: PoolProcess[] = [];
  try {
    // Step 1: write and import one checkpoint per family (sharded, float16 kept in two).
    const imported = [];
    for (const family of FAMILIES) {
      const checkpoint = syntheticCheckpoint(family, 3);
      const from = join(root, `${family}-hf`);
      const out = join(root, family);
      await writeCheckpoint(from, checkpoint, family === "qwen2_moe" ? 3 : 1);
      const lines: string[] = [];
      const flags = family === "qwen3_moe" ? ["--keep-fp16"] : [];
      assert.equal(
        await importMain(
          ["--from", from, "--out", out, "--name", family, ...flags],
          (l) => lines.push(l),
        ),
        0,
      );
      assert.match(lines.join("\n"), /not imported: dense layers/);
      imported.push({ family, checkpoint, out, lines });
    }
    // Step 2: one real backend process per imported model, started together.
    backends.push(
      ...await Promise.all(imported.map(({ out }) => {
        const port = freePort();
        return startProcess("gpu-backend/main.ts", {
          url: `http://127.0.0.1:${port}`,
          token: TOKEN,
          env: {
            SWITCHYARD_MODEL__DIR: out,
            SWITCHYARD_AUTH__INTERNAL_TOKEN: TOKEN,
            SWITCHYARD_BACKEND__PORT: String(port),
            SWITCHYARD_BACKEND__EXECUTORS: "1",
            SWITCHYARD_LOG__LEVEL: "warn",
            SWITCHYARD_LOG__DIR: "",
            SWITCHYARD_STATE__KV: ":memory:",
          },
        });
      })),
    );
    // Step 3: compare every family's answers with the independent forward pass.
    const gaussian = createGaussian(createRandom(21));
    for (const [i, { family, checkpoint, lines }] of imported.entries()) {
      await t.step(family, async () => {
        const hidden = checkpoint.config["hidden_size"] as number;
        const rows = 6;
        const tokens = Float32Array.from({ length: rows * hidden }, () => gaussian());
        const call = await infer(backends[i]!.url, family, tokens, hidden, {
          outputs: ["output", "expert_ids"],
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        assert.equal(call.status, 200, JSON.stringify(call.error));
        const expected = hfMoeForward(checkpoint, tokens, rows);
        const output = call.decoded!.tensors.get("output")!.data;
        let error = 0;
        output.forEach((v, j) => error = Math.max(error, Math.abs(v - expected.output[j]!)));
        assert(error <= 1e-4, `${family}: max abs error ${error}\n${lines.join("\n")}`);
        const ids = call.decoded!.tensors.get("expert_ids")!;
        const [layers, , topK] = ids.shape as [number, number, number];
        assert.equal(layers, expected.experts.length);
        for (let layer = 0; layer < layers; layer++) {
          for (let row = 0; row < rows; row++) {
            const start = (layer * rows + row) * topK;
            const got = [...ids.data.slice(start, start + topK)].sort((a, b) => a - b);
            assert.deepEqual(
              got,
              expected.experts[layer]![row],
              `${family} layer ${layer} row ${row}`,
            );
          }
        }
      });
    }
  } finally {
    await Promise.all(backends.map((b) => b.kill()));
    await Deno.remove(root, { recursive: true });
  }
});
