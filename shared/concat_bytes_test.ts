import assert from "node:assert/strict";
import { concatBytes } from "./concat_bytes.ts";

Deno.test("concatBytes joins chunks in order into a new buffer", () => {
  const a = new Uint8Array([1, 2]);
  const joined = concatBytes([a, new Uint8Array([]), new Uint8Array([3])]);
  assert.deepEqual([...joined], [1, 2, 3]);
  assert.deepEqual([...concatBytes([a], 2)], [1, 2]);
  assert.notEqual(concatBytes([a]).buffer, a.buffer, "always a copy");
  assert.equal(concatBytes([]).byteLength, 0);
});
