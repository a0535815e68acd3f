import assert from "node:assert/strict";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { LoopLagMonitor } from "./loop_lag.ts";
import { OutlierDetector } from "./outlier_detector.ts";

Deno.test("LoopLagMonitor measures how late its timer fires after the loop was blocked", async () => {
  const clock = new ManualClock(0);
  const monitor = new LoopLagMonitor(clock, { intervalMs: 100, windowMs: 2000 });
  monitor.start();
  await clock.advance(500);
  assert.equal(monitor.recentMax(), 0, "an idle loop fires on time");
  const before = clock.now();
  clock.stall(700); // a 700 ms busy stretch: the pending sample is overdue by 600 ms
  assert.equal(monitor.maxSince(before), 600, "overdue right now counts");
  await clock.advance(0);
  assert.equal(monitor.maxSince(before), 600);
  await clock.advance(1000);
  assert.equal(monitor.recentMax(), 600);
  await clock.advance(2000);
  assert.equal(monitor.recentMax(), 0, "the busy stretch left the window");
  assert.equal(monitor.maxSince(before), 0);
  monitor.stop();
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("lag allowance: a probe timeout during a stall is excused, the same timeout on an idle loop is not", async () => {
  const clock = new ManualClock(0);
  const monitor = new LoopLagMonitor(clock, { intervalMs: 100 });
  const detector = new OutlierDetector({
    ejectAfter: 1,
    readmitAfter: 1,
    panicThreshold: 0,
    lagAllowanceMs: 200,
  });
  detector.probePassed("a");
  monitor.start();
  await clock.advance(1000);
  const probeStarted = clock.now();
  clock.stall(1500); // the router was busy for the whole probe timeout
  await clock.advance(0);
  assert.equal(detector.failed("a", "probe_timeout", monitor.maxSince(probeStarted)), "excused");
  assert.equal(detector.inRotation("a"), true);
  await clock.advance(1000);
  const idleProbe = clock.now();
  await clock.advance(1000); // the backend alone was late
  assert.equal(monitor.maxSince(idleProbe), 0);
  assert.equal(detector.failed("a", "probe_timeout", monitor.maxSince(idleProbe)), "ejected");
  monitor.stop();
});
