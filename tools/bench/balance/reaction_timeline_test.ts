import assert from "node:assert/strict";
import { reactionTimeline, type TimelineDecision } from "./reaction_timeline.ts";

const decision = (at: number, action: string, outcome: string, before: number | null) =>
  ({
    at,
    action,
    outcome,
    before,
    after: null,
    reason: "",
  }) satisfies TimelineDecision;

Deno.test("reactionTimeline: drop, switch and recovery times after the step", () => {
  const step = 10_000;
  const worst = [0.95, 0.8, 0.6, 0.62, 0.7, 0.92, 0.85, 0.93, 0.95, 0.97, 0.99];
  const samples = worst.map((w, i) => ({ t: (i + 1) * 1000, worst: w }));
  const timeline = reactionTimeline(step, samples, [
    decision(9_000, "rebalance", "switched", 0.5), // before the step: ignored
    decision(12_000, "none", "kept", 0.7),
    decision(14_500, "rebalance", "switched", 0.65),
    decision(16_000, "none", "kept", 0.98),
  ], 0.9);
  assert.equal(timeline.dropS, 2);
  assert.equal(timeline.lowestMeasured, 0.6);
  assert.equal(timeline.switchS, 4.5);
  // From 5 s on: 0.92, 0.85 (breaks), then 0.93, 0.95, 0.97 hold for 3 polls from 8 s.
  assert.equal(timeline.recoveredS, 8);
  assert.equal(timeline.lowestSeenByBalancer, 0.65);
});

Deno.test("reactionTimeline without a switch has no recovery, however balanced", () => {
  const samples = [1, 2, 3, 4].map((i) => ({ t: i * 1000, worst: 0.97 }));
  const timeline = reactionTimeline(0, samples, [decision(500, "none", "kept", 0.96)], 0.9);
  assert.equal(timeline.dropS, null);
  assert.equal(timeline.switchS, null);
  assert.equal(timeline.recoveredS, null);
  assert.equal(timeline.lowestMeasured, 0.97);
});

Deno.test("reactionTimeline skips polls that measured nothing", () => {
  const timeline = reactionTimeline(
    0,
    [{ t: 1000, worst: null }, { t: 2000, worst: 0.5 }],
    [],
    0.9,
  );
  assert.equal(timeline.dropS, 2);
  assert.equal(timeline.lowestMeasured, 0.5);
});
