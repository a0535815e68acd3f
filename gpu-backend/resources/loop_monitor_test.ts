import assert from "node:assert/strict";
import { LoopMonitor, probeLag } from "./loop_monitor.ts";

Deno.test("probeLag(): lateness beyond the period and the tolerance", () => {
  assert.equal(probeLag(20, 20.5, 1), 0);
  assert.equal(probeLag(20, 31, 1), 10);
  assert.equal(probeLag(20, 5, 1), 0);
});

Deno.test("LoopMonitor counts a blocked event loop as lag", async () => {
  const monitor = new LoopMonitor({ periodMs: 10 });
  monitor.start();
  try {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = monitor.counters();
    // Block the loop for 300 ms: the probe fires at least ~290 ms late.
    const until = performance.now() + 300;
    while (performance.now() < until) { /* busy */ }
    await new Promise((resolve) => setTimeout(resolve, 30));
    const after = monitor.counters();
    const lag = after.lagMs - before.lagMs;
    const elapsed = after.elapsedMs - before.elapsedMs;
    assert.ok(lag >= 250, `lag ${lag}`);
    assert.ok(elapsed >= 300, `elapsed ${elapsed}`);
    assert.ok(lag <= elapsed);
  } finally {
    monitor.stop();
  }
});
