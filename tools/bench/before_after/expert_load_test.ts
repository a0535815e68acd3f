import assert from "node:assert/strict";
import type { LoadReport } from "../../../shared/load_report.ts";
import { backendLoads, logicalLoads, replicaLoads, spread } from "./expert_load.ts";

function report(backend: string, tokens: Record<string, number>): LoadReport {
  return {
    backend,
    model: "m",
    at: 0,
    uptimeMs: 1,
    executionProvider: "cpu",
    slots: 1,
    busyMs: 0,
    requests: 0,
    tokens: 0,
    inFlightRequests: 0,
    inFlightRows: 0,
    rejected: 0,
    memory: { rssBytes: 0, heapUsedBytes: 0 },
    parts: Object.entries(tokens).map(([key, value]) => {
      const [layer, expert] = key.split(":").map(Number) as [number, number];
      return {
        part: `L${layer}/E${expert}`,
        layer,
        kind: "expert" as const,
        expert,
        tokens: value,
        executions: 0,
        busyMs: 0,
        queueDepth: 0,
      };
    }),
  };
}

Deno.test("backend loads even out a replicated hot expert; logical loads do not", () => {
  // Expert 0 is hot (60 tokens) and has a replica on each backend; experts 1, 2 get 20.
  const before = new Map([["a", report("a", {})], ["b", report("b", {})]]);
  const after = new Map([
    ["a", report("a", { "0:0": 30, "0:1": 20 })],
    ["b", report("b", { "0:0": 30, "0:2": 20 })],
  ]);
  const perBackend = backendLoads(1, before, after);
  assert.deepEqual(perBackend, [[50, 50]]);
  assert.deepEqual(logicalLoads(3, 1, before, after), [[60, 20, 20]]);
  assert.deepEqual(spread(perBackend), { cv: 0, balancedness: 1 });
  assert.ok(spread(logicalLoads(3, 1, before, after)).cv > 0.4);
  // Idle layers are left out of the average.
  assert.deepEqual(spread([[0, 0], [1, 1]]), { cv: 0, balancedness: 1 });
});

Deno.test("backendLoads() counts only the interval between the snapshots", () => {
  const before = new Map([["a", report("a", { "0:0": 100, "1:3": 5 })]]);
  const after = new Map([["a", report("a", { "0:0": 130, "1:3": 9 })]]);
  assert.deepEqual(backendLoads(2, before, after), [[30], [4]]);
});

Deno.test("replicaLoads() lists every hosted replica, idle ones as 0", () => {
  const before = new Map([["a", report("a", { "0:0": 10 })], ["b", report("b", {})]]);
  const after = new Map([
    ["a", report("a", { "0:0": 40, "0:1": 5 })],
    ["b", report("b", { "0:0": 30 })],
  ]);
  // a hosts experts 0 and 1, b hosts 0 and 2 (2 got no rows).
  const hosted = new Map([["a", [[0, 1]]], ["b", [[0, 2]]]]);
  assert.deepEqual(replicaLoads(1, hosted, before, after), [[30, 5, 30, 0]]);
});
