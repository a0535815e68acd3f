import assert from "node:assert/strict";
import { fakeMetadata } from "../../../tests/_support/router/fake_backend.ts";
import { announcedModels, catalogEntry } from "./model_catalog.ts";

Deno.test("catalogEntry() takes d_model from parameters, else from inputs[0].shape[1]", () => {
  const full = catalogEntry("tiny", fakeMetadata("tiny", 4));
  assert.ok(typeof full !== "string");
  assert.equal(full.dModel, 4);
  const bare = catalogEntry("tiny", { ...fakeMetadata("tiny", 6), parameters: undefined });
  assert.ok(typeof bare !== "string");
  assert.equal(bare.dModel, 6);
});

Deno.test("catalogEntry() explains unusable metadata", () => {
  assert.match(catalogEntry("tiny", { name: "tiny" }) as string, /^metadata platform: /);
  assert.equal(
    catalogEntry("tiny", fakeMetadata("other", 4)),
    'metadata names model "other", asked for "tiny"',
  );
  const noWidth = { ...fakeMetadata("tiny", 4), parameters: {}, inputs: [] };
  assert.match(catalogEntry("tiny", noWidth) as string, /neither parameters\.d_model/);
});

Deno.test("announcedModels() reads details.models or details.model, keeping valid names", () => {
  assert.deepEqual(announcedModels(undefined), []);
  assert.deepEqual(announcedModels({ models: ["a", "b.c", "../x", 3] }), ["a", "b.c"]);
  assert.deepEqual(announcedModels({ model: "demo" }), ["demo"]);
  assert.deepEqual(announcedModels({ backend_id: "x" }), []);
});
