import assert from "node:assert/strict";
import { BACKEND_PHASES, RequestTiming } from "./request_timing.ts";
import { PHASE_BOUNDS_S, PhaseHistogram } from "../metrics/phase_histogram.ts";
import { parseServerTiming } from "../../shared/server_timing.ts";

Deno.test("RequestTiming adds up to the request's time, the rest as host", () => {
  let now = 0;
  const timing = new RequestTiming(() => now);
  timing.add("decode", 0.5);
  timing.batch({ groups: 2, queueMs: 1, batchMs: 0.5, execMs: 2, runMs: 2.25 });
  // Hop of 3 ms, of which 1 ms was still in flight after the local work ended.
  timing.hop({ peers: 1, rows: 4, wallMs: 3, exposedMs: 1, peerMs: 2.5 });
  timing.add("encode", 0.25);
  now = 6;
  const ms = timing.finish();
  assert.deepEqual(ms, {
    decode: 0.5,
    queue: 1,
    batch: 0.5,
    exec: 2,
    handoff: 0.25,
    hop: 1,
    hop_hidden: 2,
    encode: 0.25,
    host: 0.5,
    total: 6,
  });
  const metrics = parseServerTiming(
    timing.metrics().map((m) => `${m.name};dur=${m.ms}`).join(", "),
  );
  assert.deepEqual(metrics.map((m) => m.name), [
    "decode",
    "queue",
    "batch",
    "exec",
    "handoff",
    "hop",
    "hop-hidden",
    "encode",
    "host",
    "backend",
  ]);
  const hop = timing.metrics().find((m) => m.name === "hop")!;
  assert.match(hop.desc!, /1 layer\(s\), 4 row\(s\), wall 3\.000 ms, peers serving 2\.500 ms/);
});

Deno.test("PhaseHistogram counts each phase into its bucket and sums seconds", () => {
  const histogram = new PhaseHistogram(BACKEND_PHASES);
  const ms = Object.fromEntries(BACKEND_PHASES.map((p) => [p, 0])) as Record<
    typeof BACKEND_PHASES[number],
    number
  >;
  histogram.observe({ ...ms, exec: 0.3, total: 7 });
  histogram.observe({ ...ms, exec: 100_000, total: 3 });
  const exec = histogram.distributions().find((d) => d.labels.phase === "exec")!;
  assert.equal(exec.counts[PHASE_BOUNDS_S.indexOf(0.0005)], 1);
  assert.equal(exec.counts[PHASE_BOUNDS_S.length], 1, "above every bound");
  assert.equal(exec.counts.reduce((a, b) => a + b, 0), 2);
  assert.ok(Math.abs(exec.sum - 100.0003) < 1e-9);
  const total = histogram.distributions().find((d) => d.labels.phase === "total")!;
  assert.equal(total.counts[PHASE_BOUNDS_S.indexOf(0.005)], 1);
  assert.equal(total.counts[PHASE_BOUNDS_S.indexOf(0.01)], 1);
});
