import assert from "node:assert/strict";
import { modelPartKey, parsePartKey } from "./model_manifest.ts";

Deno.test("parsePartKey() reads gates, routed and shared experts, and rejects junk", () => {
  for (const key of ["L0/gate", "L3/E12", "L1/S0"]) {
    assert.equal(modelPartKey(parsePartKey(key)!), key);
  }
  assert.deepEqual(parsePartKey("L0/gate"), { kind: "gate", layer: 0 });
  assert.deepEqual(parsePartKey("L3/E12"), { kind: "expert", layer: 3, expert: 12 });
  assert.deepEqual(parsePartKey("L1/S0"), { kind: "shared", layer: 1, expert: 0 });
  for (const junk of ["", "L/E1", "L0/X1", "L0/E", "0/E1", "L0/gate/x"]) {
    assert.equal(parsePartKey(junk), undefined, junk);
  }
});
