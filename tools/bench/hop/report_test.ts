import assert from "node:assert/strict";
import { bestProtocol, type HopCell, tokensPerCpuS } from "./report.ts";

const cell = (target: string, size: string, routerCpuMs: number, rows: number): HopCell => ({
  target,
  size,
  ok: 100,
  errors: 0,
  rows,
  seconds: 1,
  backendCpuMs: 100,
  routerCpuMs,
  latencies: [],
});

Deno.test("bestProtocol() picks per size among router targets, by router CPU or tokens per CPU-s", () => {
  const cells = [
    cell("backend direct", "demo", 0, 1000),
    cell("via router, A", "demo", 40, 300),
    cell("via router, B", "demo", 50, 400),
    cell("via router, A", "32", 60, 900),
    cell("via router, B", "32", 55, 800),
  ];
  assert.deepEqual([...bestProtocol(cells)], [["demo", "via router, A"], ["32", "via router, B"]]);
  assert.deepEqual([...bestProtocol(cells, tokensPerCpuS)], [
    ["demo", "via router, B"],
    ["32", "via router, A"],
  ]);
});
