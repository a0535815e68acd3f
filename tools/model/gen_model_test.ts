/** @module Tests of the `gen-model` command line. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ModelManifestSchema } from "../../shared/model_manifest.ts";
import { main } from "./gen_model.ts";
import { withTempDir } from "./test_helpers.ts";

const SMALL = ["--d-model", "8", "--d-ff", "8", "--experts", "4", "--groups", "2", "--layers", "1"];

Deno.test("gen-model writes the model from flags and skips an existing one without --force", async () => {
  await withTempDir(async (dir) => {
    const out = join(dir, "m");
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    const flags = ["--out", out, ...SMALL, "--activation", "relu", "--name", "tiny"];
    assert.equal(await main(flags, log), 0);
    const manifestPath = join(out, "moe.json");
    const manifest = ModelManifestSchema.parse(JSON.parse(await Deno.readTextFile(manifestPath)));
    assert.equal(manifest.name, "tiny");
    assert.equal(manifest.d_model, 8);
    assert.equal(manifest.experts, 4);
    assert.equal(manifest.activation, "relu");
    assert.match(lines.at(-1)!, /wrote "tiny" .*: 6 ONNX files, .* MB/);
    const gatePath = join(out, "layer0", "gate.onnx");
    const firstGate = await Deno.readFile(gatePath);
    assert.equal(await main(["--out", out, ...SMALL, "--seed", "9"], log), 0);
    assert.match(lines.at(-1)!, /exists, skipping \(use --force to regenerate\)/);
    assert.deepEqual(await Deno.readFile(gatePath), firstGate);
    assert.equal(await main(["--out", out, ...SMALL, "--seed", "9", "--force"], log), 0);
    assert.notDeepEqual(await Deno.readFile(gatePath), firstGate);
  });
});

Deno.test("gen-model writes SwiGLU experts, GELU and a sigmoid router into the manifest", async () => {
  await withTempDir(async (dir) => {
    const flags = ["--out", dir, ...SMALL, "--expert-kind", "swiglu", "--activation", "gelu_tanh"];
    const router = [
      "--scoring",
      "sigmoid",
      "--group-score",
      "sum_top2",
      "--norm-topk-prob",
      "false",
    ];
    assert.equal(await main([...flags, ...router, "--routed-scaling-factor", "2.5"], () => {}), 0);
    const manifest = ModelManifestSchema.parse(
      JSON.parse(await Deno.readTextFile(join(dir, "moe.json"))),
    );
    assert.equal(manifest.expert_kind, "swiglu");
    assert.equal(manifest.activation, "gelu_tanh");
    assert.deepEqual(manifest.router, {
      scoring: "sigmoid",
      group_score: "sum_top2",
      norm_topk_prob: false,
      routed_scaling_factor: 2.5,
    });
  });
});

Deno.test("gen-model rejects non-integer sizes and unknown activations", async () => {
  await assert.rejects(
    main(["--d-model", "2.5"]),
    /Cannot parse --d-model: "2.5" is not an integer/,
  );
  await assert.rejects(main(["--activation", "tanh"]), /Cannot parse --activation: "tanh"/);
  await assert.rejects(main(["--expert-kind", "moe"]), /Cannot parse --expert-kind: "moe"/);
  await assert.rejects(main(["--bogus"]), /Unknown option/);
});

Deno.test("gen-model --preset bench writes the seed-shaped model; flags override its fields", async () => {
  await withTempDir(async (dir) => {
    // Layers and d_ff overridden to keep the test small; the rest is the preset's.
    const flags = ["--preset", "bench", "--out", dir, "--layers", "1", "--d-ff", "4"];
    const lines: string[] = [];
    assert.equal(await main(flags, (line) => lines.push(line)), 0);
    const manifest = ModelManifestSchema.parse(
      JSON.parse(await Deno.readTextFile(join(dir, "moe.json"))),
    );
    assert.equal(manifest.name, "bench-moe");
    assert.deepEqual(
      [manifest.d_model, manifest.d_ff, manifest.layers, manifest.experts, manifest.top_k],
      [256, 4, 1, 256, 8],
    );
    assert.deepEqual([manifest.groups, manifest.topk_group, manifest.shared_experts], [8, 4, 1]);
    assert.equal(manifest.router.scoring, "sigmoid");
    assert.equal(manifest.router.group_score, "sum_top2");
    assert.match(lines.at(-1)!, /wrote "bench-moe" .*: 258 ONNX files/);
  });
  await assert.rejects(main(["--preset", "huge"]), /"huge" is not one of demo, bench/);
});
