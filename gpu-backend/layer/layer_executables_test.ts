import assert from "node:assert/strict";
import { silentLogger } from "../../shared/logger.ts";
import { generateModel } from "../../tools/model/generate.ts";
import { createOrtRunner } from "../execution/ort_part_executor.ts";
import { LayerExecutables } from "./layer_executables.ts";

Deno.test("LayerExecutables stages beside the current set, swaps on activation and unloads the old one once idle", async () => {
  const dir = await Deno.makeTempDir({ prefix: "switchyard-exec-" });
  const manifest = await generateModel(dir, {
    dModel: 8,
    dFf: 8,
    layers: 2,
    experts: 4,
    groups: 1,
    topkGroup: 1,
  });
  const runner = await createOrtRunner({ modelDir: dir, manifest, workers: 0, providers: ["cpu"] });
  const executables = new LayerExecutables({
    runner,
    manifest,
    modelDir: dir,
    logger: silentLogger,
  });
  try {
    await executables.start([[0, 1, 2, 3], [0, 1, 2, 3]]);
    const first = [executables.current(0), executables.current(1)];
    assert.deepEqual(first.map((e) => e.experts), [[0, 1, 2, 3], [0, 1, 2, 3]]);
    assert.ok(first[0]!.fusedGate && !first[1]!.fusedGate, "the last layer has no next gate");
    assert.ok(runner.has(executables.gateKey(0)));

    // Layer 0 changes, layer 1 keeps its set (and its executable).
    const ms = await executables.stage(7, [[3, 1], [0, 1, 2, 3]]);
    assert.ok(ms > 0, `composing and loading layer 0 took ${ms} ms`);
    assert.equal(executables.stagedVersion, 7);
    assert.equal(executables.current(0), first[0], "the current set serves while staging");
    assert.ok(executables.holds(0, 0), "current");
    assert.ok(executables.holds(0, 3), "staged");
    executables.acquire(first[0]!); // work routed for the old executable is still running
    assert.equal(executables.activate(6), false, "only the staged version activates");
    assert.equal(executables.activate(7), true);
    const next = executables.current(0);
    assert.deepEqual(next.experts, [1, 3], "hosting order is ascending expert id");
    assert.deepEqual([...next.position], [-1, 0, -1, 1]);
    assert.equal(executables.current(1), first[1]);
    assert.ok(!executables.holds(0, 0) && executables.holds(0, 1));
    assert.ok(runner.has(first[0]!.key), "kept while work holds it");
    executables.release(first[0]!);
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.ok(!runner.has(first[0]!.key), "unloaded once idle");
    assert.ok(runner.has(next.key) && runner.has(first[1]!.key));
  } finally {
    await runner.close();
    await Deno.remove(dir, { recursive: true });
  }
});
