import assert from "node:assert/strict";
import { summarizeProfile } from "./ort_profile.ts";

Deno.test("summarizeProfile() averages kernel time per op over the timed runs only", () => {
  const run = (ts: number, dur: number) => ({ cat: "Session", name: "model_run", ts, dur });
  const kernel = (ts: number, op: string, dur: number) => ({
    cat: "Node",
    name: `${op}:n_kernel_time`,
    ts,
    dur,
    args: { op_name: op },
  });
  const events = [
    kernel(0, "Gemm", 1000), // warm-up: not counted
    run(0, 2000),
    kernel(10, "Gemm", 60),
    kernel(20, "Gemm", 40),
    kernel(30, "Relu", 5),
    run(10, 120),
    kernel(200, "Gemm", 80),
    kernel(210, "Gemm", 20),
    kernel(220, "Relu", 15),
    run(200, 140),
  ];
  const profile = summarizeProfile(events, 1);
  assert.equal(profile.runUs, 130);
  assert.deepEqual(profile.ops.get("Gemm"), { us: 100, nodes: 2 });
  assert.deepEqual(profile.ops.get("Relu"), { us: 10, nodes: 1 });
});
