import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { generateModel } from "../model/generate.ts";
import { ModelSetupError, prepareModel } from "./model_setup.ts";

Deno.test("prepareModel() reads an existing model and never generates over a configured dir", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await assert.rejects(
      prepareModel(join(dir, "typo"), { source: 'config file "s.yaml"' }),
      (error: unknown) =>
        error instanceof ModelSetupError &&
        error.message.startsWith(
          `Cannot start: no model at "${resolve(dir, "typo", "moe.json")}" (model.dir "${
            join(dir, "typo")
          }" from config file "s.yaml")`,
        ),
    );
    await generateModel(dir, { dModel: 8, dFf: 8, experts: 4, topK: 2, groups: 1, topkGroup: 1 });
    const manifest = await prepareModel(dir);
    assert.equal(manifest.experts, 4);
    await Deno.writeTextFile(join(dir, "moe.json"), '{"name": 3}');
    await assert.rejects(prepareModel(dir), /is not a model manifest: name: /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
