import assert from "node:assert/strict";
import { fakeLoadReport } from "../../../tests/_support/router/load_reports.ts";
import { reportRates, sameRun } from "./load_rates.ts";

const T0 = 1_700_000_000_000;

Deno.test("reportRates() turns counter deltas into per-second rates and utilisation", () => {
  const before = fakeLoadReport({
    at: T0,
    busyMs: 100,
    tokens: 50,
    requests: 10,
    expertTokens: [[10, 0, 0, 0], [0, 0, 5, 5]],
  });
  const after = fakeLoadReport({
    at: T0 + 2000,
    busyMs: 1100,
    tokens: 250,
    requests: 30,
    expertTokens: [[210, 40, 0, 0], [0, 0, 5, 205]],
  });
  const rates = reportRates(before, after)!;
  assert.deepEqual(rates.backend, {
    intervalMs: 2000,
    // 1000 ms busy over 2000 ms × 2 slots.
    utilisation: 0.25,
    tokensPerS: 100,
    requestsPerS: 10,
    rejectedPerS: 0,
  });
  const tokens = (part: string) => rates.parts.find((rate) => rate.part === part)?.tokensPerS;
  assert.deepEqual(["L0/E0", "L0/E1", "L0/E2", "L1/E3"].map(tokens), [100, 20, 0, 100]);
  assert.equal(tokens("L0/gate"), 100);
  const e0 = rates.parts.find((rate) => rate.part === "L0/E0")!;
  assert.equal(e0.layer, 0);
  assert.equal(e0.kind, "expert");
  assert.equal(e0.expert, 0);
  assert.equal(e0.executionsPerS, 100);
});

Deno.test("reportRates() clamps utilisation to 1 when completions bunch up", () => {
  const before = fakeLoadReport({ at: T0, busyMs: 0, slots: 1 });
  const after = fakeLoadReport({ at: T0 + 1000, busyMs: 1500, slots: 1 });
  assert.equal(reportRates(before, after)?.backend.utilisation, 1);
});

Deno.test("reportRates() refuses reports of different runs (restart, other backend, no time)", () => {
  const before = fakeLoadReport({ at: T0, busyMs: 500, tokens: 100 });
  const restarted = fakeLoadReport({ at: T0 + 1000, uptimeMs: 800, busyMs: 10, tokens: 5 });
  assert.equal(sameRun(before, restarted), false);
  assert.equal(reportRates(before, restarted), undefined);
  const other = fakeLoadReport({ backend: "backend-2", at: T0 + 1000, busyMs: 600 });
  assert.equal(reportRates(before, other), undefined);
  assert.equal(reportRates(before, before), undefined);
});

Deno.test("reportRates() derives CPU cores and network bytes/s from resource counters", () => {
  const resources = (cpuMs: number, netRxBytes: number, netTxBytes: number) => ({
    cpuMs,
    netRxBytes,
    netTxBytes,
    accelerator: null,
    powerW: null,
  });
  const before = fakeLoadReport({ at: T0, resources: resources(1000, 500, 800) });
  const after = fakeLoadReport({ at: T0 + 2000, resources: resources(4000, 2500, 10_800) });
  // 3000 CPU ms over 2000 ms: one and a half cores busy.
  assert.deepEqual(reportRates(before, after)?.resources, {
    cpuCores: 1.5,
    netRxBytesPerS: 1000,
    netTxBytesPerS: 5000,
  });
  // An older backend without resources on either side: no resource rates, other rates kept.
  const old = fakeLoadReport({ at: T0 });
  const rates = reportRates(old, after);
  assert.equal(rates?.resources, undefined);
  assert.equal(rates?.backend.intervalMs, 2000);
});

Deno.test("hostRates(): loop busy share, queue wait beyond the window, service per execution", () => {
  const host = (
    lag: number,
    elapsed: number,
    groups: number,
    delay: number,
    runs: number,
    ms: number,
  ) => ({
    loopLagMs: lag,
    loopElapsedMs: elapsed,
    groups,
    queueDelayMs: delay,
    executions: runs,
    executionMs: ms,
    windowMs: 2,
  });
  const before = fakeLoadReport({ at: 1_700_000_000_000, host: host(10, 1000, 100, 200, 50, 100) });
  const after = fakeLoadReport({
    at: 1_700_000_001_000,
    host: host(410, 2000, 300, 2200, 150, 600),
  });
  const rates = reportRates(before, after)!;
  assert.deepEqual(rates.host, {
    hostBusy: 0.4,
    // 2000 ms over 200 groups = 10 ms each, 8 beyond the 2 ms window.
    queueWaitMs: 8,
    serviceMs: 5,
    groupsPerS: 200,
  });
  // An older backend without the section: no host rates, never zeros.
  assert.equal(reportRates(fakeLoadReport({ at: 1 }), fakeLoadReport({ at: 2 }))?.host, undefined);
});

Deno.test("hostRates() takes the queue wait a backend counted while every execution place was taken", () => {
  const host = (groups: number, delay: number, busyWait: number) => ({
    loopLagMs: 0,
    loopElapsedMs: 1000 * groups,
    groups,
    queueDelayMs: delay,
    busyWaitMs: busyWait,
    executions: groups,
    executionMs: groups,
    windowMs: 0,
  });
  const before = fakeLoadReport({ at: 1_700_000_000_000, host: host(100, 500, 100) });
  // 100 groups waited 5 ms each with the window at 0, but only 1 ms of it with every place
  // taken: the rest was the batch filling or a wave regrouping, not queueing.
  const after = fakeLoadReport({ at: 1_700_000_001_000, host: host(200, 1000, 200) });
  assert.equal(reportRates(before, after)!.host!.queueWaitMs, 1);
});

Deno.test("reportRates() carries the peer counters' deltas over the interval", () => {
  const peer = (rowsSent: number, exposedMs: number) => ({
    hops: rowsSent / 2,
    rowsSent,
    hopMs: 2 * exposedMs,
    exposedMs,
    coveredMs: 0,
    peerServeMs: 0,
    sendCpuMs: 1,
    framesServed: 0,
    rowsServed: 0,
    serveCpuMs: 1,
  });
  const before = { ...fakeLoadReport({ at: T0 }), peer: peer(10, 4) };
  const after = { ...fakeLoadReport({ at: T0 + 1000 }), peer: peer(50, 10) };
  assert.deepEqual(reportRates(before, after)?.peer, {
    ...peer(40, 6),
    hopMs: 12,
    sendCpuMs: 0,
    serveCpuMs: 0,
  });
  assert.equal(reportRates(fakeLoadReport({ at: T0 }), after)?.peer, undefined);
});
