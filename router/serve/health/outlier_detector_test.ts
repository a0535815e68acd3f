import assert from "node:assert/strict";
import { OutlierDetector } from "./outlier_detector.ts";

const SETTINGS = { ejectAfter: 3, readmitAfter: 2, panicThreshold: 0.5, lagAllowanceMs: 200 };

Deno.test("OutlierDetector admits on the first passing probe, ejects after consecutive failures only", () => {
  const detector = new OutlierDetector(SETTINGS);
  assert.equal(detector.inRotation("a"), false);
  assert.equal(detector.failed("a", "probe_failed"), "out", "never admitted: stays out");
  assert.equal(detector.probePassed("a"), "admitted");
  assert.equal(detector.failed("a", "connection"), "in");
  assert.equal(detector.failed("a", "timeout"), "in");
  assert.equal(detector.trafficPassed("a"), "in", "a success resets the count");
  assert.equal(detector.failed("a", "server_error"), "in");
  assert.equal(detector.failed("a", "server_error"), "in");
  assert.equal(detector.failed("a", "probe_timeout"), "ejected");
  assert.equal(detector.inRotation("a"), false);
  assert.deepEqual([...detector.ejections()], [["probe_timeout", 1]]);
});

Deno.test("OutlierDetector re-admits an ejected backend after consecutive passing probes", () => {
  const detector = new OutlierDetector(SETTINGS);
  detector.probePassed("a");
  for (let i = 0; i < 3; i++) detector.failed("a", "connection");
  assert.equal(detector.probePassed("a"), "out");
  assert.equal(detector.failed("a", "connection"), "out", "a failure restarts the run");
  assert.equal(detector.probePassed("a"), "out");
  assert.equal(detector.trafficPassed("a"), "out", "traffic never re-admits");
  assert.equal(detector.probePassed("a"), "admitted");
  assert.deepEqual(detector.state("a"), {
    inRotation: true,
    failures: 0,
    successes: 0,
    lastFailure: "connection",
  });
});

Deno.test("OutlierDetector takes a backend that says it is not ready out at once", () => {
  const detector = new OutlierDetector(SETTINGS);
  detector.probePassed("a");
  assert.equal(detector.failed("a", "not_ready"), "ejected");
  assert.equal(detector.ejections().get("not_ready"), 1);
});

Deno.test("OutlierDetector excuses timeouts the router's own lag explains, and only timeouts", () => {
  const detector = new OutlierDetector(SETTINGS);
  detector.probePassed("a");
  for (let i = 0; i < 10; i++) {
    assert.equal(detector.failed("a", "probe_timeout", 250), "excused");
    assert.equal(detector.failed("a", "timeout", 200), "excused");
  }
  assert.equal(detector.inRotation("a"), true);
  assert.equal(detector.excused, 20);
  assert.equal(detector.failed("a", "connection", 10_000), "in", "lag never excuses a refusal");
  assert.equal(detector.failed("a", "timeout", 199), "in");
  assert.equal(detector.failed("a", "probe_timeout", 0), "ejected");
});

Deno.test("OutlierDetector panics when fewer than the threshold are in rotation", () => {
  const detector = new OutlierDetector(SETTINGS);
  const members = ["a", "b", "c", "d"];
  assert.equal(detector.panic(members), true, "nothing admitted yet");
  for (const id of members) detector.probePassed(id);
  assert.equal(detector.panic(members), false);
  detector.failed("a", "not_ready");
  detector.failed("b", "not_ready");
  assert.equal(detector.panic(members), false, "half in rotation is not below one half");
  detector.failed("c", "not_ready");
  assert.equal(detector.panic(members), true);
  assert.equal(detector.panic([]), false);
  const never = new OutlierDetector({ ...SETTINGS, panicThreshold: 0 });
  assert.equal(never.panic(["x"]), false, "threshold 0 never panics");
});
