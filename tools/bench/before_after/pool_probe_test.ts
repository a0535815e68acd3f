import assert from "node:assert/strict";
import type { LoadReport } from "../../../shared/load_report.ts";
import { poolInterval, type PoolSnapshot } from "./pool_probe.ts";

function report(backend: string, busyMs: number, tokens: Record<number, number>): LoadReport {
  return {
    backend,
    model: "m",
    at: 0,
    uptimeMs: 1,
    executionProvider: "cpu",
    slots: 1,
    busyMs,
    requests: 0,
    tokens: 0,
    inFlightRequests: 0,
    inFlightRows: 0,
    rejected: 0,
    memory: { rssBytes: 0, heapUsedBytes: 0 },
    parts: Object.entries(tokens).map(([expert, value]) => ({
      part: `L0/E${expert}`,
      layer: 0,
      kind: "expert" as const,
      expert: Number(expert),
      tokens: value,
      executions: 0,
      busyMs: 0,
      queueDepth: 0,
    })),
  };
}

function snap(at: number, reports: LoadReport[], cpu: number): PoolSnapshot {
  return {
    at,
    reports: new Map(reports.map((r) => [r.backend, r])),
    cpuMs: { router: cpu, backends: reports.map(() => cpu), generator: cpu },
  };
}

Deno.test("poolInterval() turns two snapshots into busy shares, cores and load spreads", () => {
  const from = snap(0, [report("a", 0, {}), report("b", 100, {})], 0);
  const to = snap(
    2000,
    [report("a", 1000, { 0: 30, 1: 10 }), report("b", 300, { 0: 30, 2: 10 })],
    500,
  );
  const hosted = new Map([["a", [[0, 1]]], ["b", [[0, 2, 3]]]]);
  const interval = poolInterval(from, to, { layers: 1, experts: 4 }, hosted);
  assert.equal(interval.seconds, 2);
  assert.deepEqual(interval.deviceBusy, [0.5, 0.1]);
  assert.deepEqual(interval.cores, { router: 0.25, backends: 0.5, generator: 0.25 });
  assert.equal(interval.backendCv, 0); // 40 tokens each
  assert.equal(interval.backendBalancedness, 1);
  // Replicas: 30, 10 on a; 30, 10, 0 on b.
  const replicas = [30, 10, 30, 10, 0];
  const mean = replicas.reduce((x, y) => x + y) / replicas.length;
  const sd = Math.sqrt(replicas.reduce((x, y) => x + (y - mean) ** 2, 0) / replicas.length);
  assert.ok(Math.abs(interval.replicaCv! - sd / mean) < 1e-12);
  assert.equal(poolInterval(from, to, { layers: 1, experts: 4 }, null).replicaCv, null);
});
