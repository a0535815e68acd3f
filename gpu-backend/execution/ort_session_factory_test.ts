/** @module Tests of the session options built from the provider settings. */
import assert from "node:assert/strict";
import { sessionOptionsFor } from "./ort_session_factory.ts";

Deno.test("sessionOptionsFor() passes the CUDA device id and the memory arena setting", () => {
  assert.deepEqual(sessionOptionsFor("cuda", { cudaDeviceId: 3, memoryArena: false }), {
    executionProviders: [{ name: "cuda", deviceId: 3 }],
    enableCpuMemArena: false,
  });
  assert.deepEqual(sessionOptionsFor("cpu"), {
    executionProviders: ["cpu"],
    enableCpuMemArena: true,
  });
  assert.deepEqual(sessionOptionsFor("cuda").executionProviders, [{ name: "cuda", deviceId: 0 }]);
});
