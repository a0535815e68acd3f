import assert from "node:assert/strict";
import { resolvePoolId } from "./pool_id.ts";

Deno.test("resolvePoolId(): routers on one KV agree, a configured id wins, no KV gets a new one", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const [a, b] = await Promise.all([resolvePoolId(kv, undefined), resolvePoolId(kv, undefined)]);
    assert.match(a, /^pool-[0-9a-f]{8}$/);
    assert.equal(b, a);
    assert.equal(await resolvePoolId(kv, "fixed"), "fixed");
    assert.notEqual(
      await resolvePoolId(undefined, undefined),
      await resolvePoolId(undefined, undefined),
    );
  } finally {
    kv.close();
  }
});
