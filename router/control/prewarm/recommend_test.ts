import assert from "node:assert/strict";
import { decideTrigger, targetBackends } from "./recommend.ts";

Deno.test("targetBackends() is ceil(predicted / (capacity · threshold)) clamped to [1, max]", () => {
  assert.equal(targetBackends(500, 200, 0.8, 8), 4); // 500 / 160 = 3.125
  assert.equal(targetBackends(480, 200, 0.8, 8), 3); // exactly 3
  assert.equal(targetBackends(0, 200, 0.8, 8), 1, "never below 1");
  assert.equal(targetBackends(-5, 200, 0.8, 8), 1);
  assert.equal(targetBackends(100_000, 200, 0.8, 8), 8, "never above max_backends");
  assert.throws(() => targetBackends(10, 0, 0.8, 8), /capacity 0/);
});

Deno.test("decideTrigger() prefers overload, then a leading event, else none", () => {
  const base = { capacityPerBackend: 100, backends: 2, threshold: 0.5, leadingEvents: [] };
  assert.equal(decideTrigger({ ...base, predictedTokensPerS: 100 }).trigger, "none");
  assert.equal(decideTrigger({ ...base, predictedTokensPerS: 101 }).trigger, "overload");
  assert.equal(
    decideTrigger({ ...base, predictedTokensPerS: 101, leadingEvents: ["a"] }).trigger,
    "overload",
  );
  const lead = decideTrigger({ ...base, predictedTokensPerS: 1, leadingEvents: ["a", "b"] });
  assert.equal(lead.trigger, "event_lead");
  assert.equal(lead.reason, 'lead time of event "a", "b" has begun');
  const unknown = decideTrigger({ ...base, capacityPerBackend: null, predictedTokensPerS: 1e9 });
  assert.equal(unknown.trigger, "none");
  assert.match(unknown.reason, /capacity unknown/);
});
