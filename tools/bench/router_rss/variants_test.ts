import assert from "node:assert/strict";
import { pickVariants, RSS_VARIANTS } from "./variants.ts";

Deno.test("pickVariants(): all by default, named ones in order, unknown names refused", () => {
  assert.equal(pickVariants(undefined).length, RSS_VARIANTS.length);
  assert.equal(pickVariants("")[0]!.name, "defaults");
  assert.deepEqual(pickVariants("semi1, defaults").map((v) => v.name), ["semi1", "defaults"]);
  assert.throws(() => pickVariants("nope"), /Cannot pick variant "nope": known are defaults/);
});
