import assert from "node:assert/strict";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { RetryBudget } from "./retry_budget.ts";

Deno.test("RetryBudget allows the minimum per second on a quiet router", () => {
  const clock = new ManualClock(0);
  const budget = new RetryBudget({ ratio: 0.2, minPerSecond: 3, windowMs: 10_000 });
  budget.request(clock.now());
  // 3 per second over a 10 s window: 30 retries, whatever the ratio says.
  for (let i = 0; i < 30; i++) assert.equal(budget.tryRetry(clock.now()), true, `retry ${i}`);
  assert.equal(budget.tryRetry(clock.now()), false);
  assert.equal(budget.refused, 1);
});

Deno.test("RetryBudget caps retries at the ratio of requests over the sliding window", async () => {
  const clock = new ManualClock(0);
  const budget = new RetryBudget({ ratio: 0.2, minPerSecond: 1, windowMs: 10_000 });
  // 100 requests a second for 10 s: 1,000 in the window, so 200 retries fit.
  for (let second = 0; second < 10; second++) {
    for (let i = 0; i < 100; i++) budget.request(clock.now());
    if (second < 9) await clock.advance(1000);
  }
  let allowed = 0;
  while (budget.tryRetry(clock.now())) allowed++;
  assert.equal(allowed, 200);
  assert.deepEqual(budget.window(clock.now()), { requests: 1000, retries: 200 });
  // One second later the oldest bucket (100 requests) leaves the window: 180 allowed,
  // and the 200 retries still counted (all in the last bucket) exceed it.
  await clock.advance(1000);
  assert.deepEqual(budget.window(clock.now()), { requests: 900, retries: 200 });
  assert.equal(budget.tryRetry(clock.now()), false);
  // After a full window with no traffic, only the minimum remains.
  await clock.advance(10_000);
  assert.deepEqual(budget.window(clock.now()), { requests: 0, retries: 0 });
  allowed = 0;
  while (budget.tryRetry(clock.now())) allowed++;
  assert.equal(allowed, 10);
});

Deno.test("RetryBudget with ratio 0 and no minimum never retries", () => {
  const budget = new RetryBudget({ ratio: 0, minPerSecond: 0 });
  for (let i = 0; i < 100; i++) budget.request(0);
  assert.equal(budget.tryRetry(0), false);
});
