import assert from "node:assert/strict";
import { type CpuProfile, splitProfile } from "./profile_split.ts";

const frame = (functionName: string, url = "") => ({ functionName, url });

Deno.test("splitProfile() gives each non-idle sample to the first bucket on its stack", () => {
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame("(root)"), children: [2, 3, 6] },
      { id: 2, callFrame: frame("handler", "file:///r/router/app.ts"), children: [4, 5] },
      { id: 3, callFrame: frame("(idle)") },
      { id: 4, callFrame: frame("fetch", "ext:deno_fetch/26_fetch.js") },
      { id: 5, callFrame: frame("parseHeader", "file:///r/shared/infer_request_codec.ts") },
      { id: 6, callFrame: frame("(garbage collector)") },
    ],
    samples: [4, 5, 3, 6, 2, 4],
    timeDeltas: [1000, 2000, 5000, 500, 250, 1000],
  };
  const split = splitProfile(profile, [
    { name: "codec", pattern: /infer_request_codec/ },
    { name: "fetch", pattern: /^fetch / },
    { name: "router", pattern: /router\// },
    { name: "gc", pattern: /garbage/ },
  ]);
  assert.deepEqual(split, [
    { name: "codec", ms: 2 },
    { name: "fetch", ms: 2 },
    { name: "router", ms: 0.25 },
    { name: "gc", ms: 0.5 },
    { name: "other", ms: 0 },
  ]);
});
