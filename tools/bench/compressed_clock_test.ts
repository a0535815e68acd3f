import assert from "node:assert/strict";
import { CompressedClock, type RealTime } from "./compressed_clock.ts";

/** Real time driven by hand: `advance(ms)` fires due timers in order. */
function manualReal(): RealTime & { advance(ms: number): void } {
  let now = 1000;
  let nextId = 0;
  const timers = new Map<number, { at: number; callback: () => void }>();
  return {
    now: () => now,
    setTimeout: (callback, delayMs) => {
      timers.set(++nextId, { at: now + delayMs, callback });
      return nextId;
    },
    clearTimeout: (handle) => void timers.delete(handle as number),
    advance(ms) {
      now += ms;
      for (const [id, timer] of [...timers].sort((a, b) => a[1].at - b[1].at)) {
        if (timer.at > now) continue;
        timers.delete(id);
        timer.callback();
      }
    },
  };
}

Deno.test("simulated time runs `speed` times faster from its anchor", () => {
  const real = manualReal();
  const clock = new CompressedClock({ speed: 60, simOrigin: 5_000_000, real });
  assert.equal(clock.now(), 5_000_000);
  real.advance(1000);
  assert.equal(clock.now(), 5_060_000);
  clock.anchor(9_000_000);
  assert.equal(clock.now(), 9_000_000);
  real.advance(500);
  assert.equal(clock.now(), 9_030_000);
});

Deno.test("timers take simulated delays and fire after delay / speed real ms", () => {
  const real = manualReal();
  const clock = new CompressedClock({ speed: 60, simOrigin: 0, real });
  const fired: number[] = [];
  clock.setTimeout(() => fired.push(clock.now()), 60_000);
  const cancelled = clock.setTimeout(() => fired.push(-1), 30_000);
  clock.clearTimeout(cancelled);
  real.advance(999);
  assert.deepEqual(fired, []);
  real.advance(1);
  assert.deepEqual(fired, [60_000]);
});

Deno.test("a speed that is not positive is refused, naming the field", () => {
  assert.throws(() => new CompressedClock({ speed: 0, simOrigin: 0 }), /speed must be a positive/);
});
