import assert from "node:assert/strict";
import { hopMs, md1MeanWaitMs, type NetworkShape, serviceMs } from "./devices.ts";
import { acceleratorParams } from "./params.ts";

const net = (devices: number): NetworkShape => ({
  devices,
  devicesPerNode: 8,
  latencyMs: 0.01,
  intraBytesPerMs: 400e6,
  interBytesPerMs: 50e6,
});

Deno.test("serviceMs is a + b·rows, and nothing for no rows", () => {
  assert.equal(serviceMs(2, 0.5, 4), 4);
  assert.equal(serviceMs(2, 0.5, 0), 0);
});

Deno.test("hopMs: latency + the slower of the intra- and inter-node parts", () => {
  assert.equal(hopMs(net(1), 1e9), 0);
  assert.equal(hopMs(net(8), 0), 0);
  // 8 devices, one node: 7/8 of 800 MB over 400 MB/ms = 1.75 ms.
  assert.ok(Math.abs(hopMs(net(8), 800e6) - (0.01 + 1.75)) < 1e-9);
  // 16 devices: intra 7/16 · 800 MB ÷ 400 = 0.875 ms; inter 8/16 · 800 MB ÷ 50 = 8 ms.
  assert.ok(Math.abs(hopMs(net(16), 800e6) - (0.01 + 8)) < 1e-9);
});

Deno.test("md1MeanWaitMs matches the Pollaczek–Khinchine formula", () => {
  // ρ = 0.5, D = 2: W = 0.5·2 / (2·0.5) = 1.
  assert.equal(md1MeanWaitMs(0.25, 2), 1);
  assert.equal(md1MeanWaitMs(1, 1), Infinity);
});

Deno.test("acceleratorParams derive from published figures and say so", () => {
  const p = acceleratorParams(10, "h100");
  assert.equal(p.fixedMs.provenance, "derived");
  assert.match(p.fixedMs.source, /published/);
  assert.match(p.perRowMs.source, /assumed/);
  // 44 M params × 2 FLOP ÷ (1979 TFLOP/s × 0.5) ≈ 0.089 µs per row.
  assert.ok(Math.abs(p.perRowMs.value - 8.9e-5) < 1e-6, String(p.perRowMs.value));
  const allowed = ["measured", "published", "assumed", "derived"];
  for (const param of Object.values(p)) assert.ok(allowed.includes(param.provenance));
});
