import assert from "node:assert/strict";
import { LogThrottle } from "./log_throttle.ts";

Deno.test("LogThrottle writes one line per key per interval, counting the events it stands for", () => {
  const throttle = new LogThrottle(10_000);
  assert.equal(throttle.event("a", 0), 1, "the first event gets a line");
  for (let i = 1; i < 500; i++) assert.equal(throttle.event("a", i), undefined);
  assert.equal(throttle.event("b", 600), 1, "keys are independent");
  assert.equal(throttle.event("a", 9_999), undefined);
  assert.equal(throttle.event("a", 10_000), 501, "500 quiet events plus this one");
  assert.equal(throttle.event("a", 30_000), 1);
});
