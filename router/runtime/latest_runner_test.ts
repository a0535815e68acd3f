import assert from "node:assert/strict";
import { LatestRunner } from "./latest_runner.ts";

Deno.test("LatestRunner runs one at a time, skips to the newest value, never blocks the offerer", async () => {
  const ran: number[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => release = resolve);
  const runner = new LatestRunner<number>(async (value) => {
    ran.push(value);
    if (value === 1) await gate;
  }, () => {});
  runner.offer(1);
  runner.offer(2);
  runner.offer(3);
  assert.deepEqual(ran, [1]);
  release();
  await runner.settled();
  assert.deepEqual(ran, [1, 3]);
  assert.equal(runner.skipped, 1);
});

Deno.test("LatestRunner reports a failed run and goes on", async () => {
  const errors: unknown[] = [];
  const ran: number[] = [];
  const runner = new LatestRunner<number>((value) => {
    ran.push(value);
    if (value === 1) throw new Error("boom");
  }, (error) => errors.push(error));
  runner.offer(1);
  await runner.settled();
  runner.offer(2);
  await runner.settled();
  assert.deepEqual(ran, [1, 2]);
  assert.equal((errors[0] as Error).message, "boom");
});
