/** Device-time invariants of the simulated devices, for all job sequences (fast-check). */
import assert from "node:assert/strict";
import fc from "fast-check";
import { type ManualTimers, manualTimers } from "../../tests/_support/gpu-backend/manual_timers.ts";
import { type BusyPeriod, SimulatedDevices } from "./simulated_devices.ts";

interface Arrival {
  /** Milliseconds after the previous job's arrival. */
  gapMs: number;
  ms: number;
}

/** Submits jobs at their arrival times on `clock`; resolves with the periods and finish times. */
async function replay(slots: number, arrivals: readonly Arrival[], clock: ManualTimers) {
  const periods: BusyPeriod[] = [];
  const devices = new SimulatedDevices({
    slots,
    now: clock.now,
    sleep: clock.sleep,
    onBusy: (period) => periods.push(period),
  });
  const finished: number[] = [];
  const jobs: Promise<void>[] = [];
  const driver = (async () => {
    for (const [i, { gapMs, ms }] of arrivals.entries()) {
      if (gapMs > 0) await clock.sleep(gapMs);
      jobs.push(
        devices.submit(ms, 1, () => i).then(({ value }) => {
          finished[value] = clock.now();
        }),
      );
    }
  })();
  await clock.run();
  await driver;
  await Promise.all(jobs);
  const stats = devices.stats();
  await devices.close();
  return { periods, finished, stats };
}

const arrivalsArb = fc.array(
  fc.record({ gapMs: fc.integer({ min: 0, max: 8 }), ms: fc.integer({ min: 0, max: 10 }) }),
  { minLength: 1, maxLength: 25 },
);

Deno.test("SimulatedDevices: busy periods never overlap per device and never start before arrival", async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 3 }), arrivalsArb, async (slots, arrivals) => {
      const clock = manualTimers();
      const { periods, finished, stats } = await replay(slots, arrivals, clock);
      assert.equal(periods.length, arrivals.length);
      for (let device = 0; device < slots; device++) {
        const own = periods.filter((p) => p.device === device).sort((a, b) => a.start - b.start);
        for (let i = 1; i < own.length; i++) {
          assert.ok(own[i]!.start >= own[i - 1]!.end, `device ${device} overlaps`);
        }
      }
      const durations = periods.map((p) => p.end - p.start).sort((a, b) => a - b);
      assert.deepEqual(durations, arrivals.map((a) => a.ms).sort((a, b) => a - b));
      for (const period of periods) assert.ok(period.start >= period.arrivedAt);
      // With timers on time, every job answers exactly at its period's end.
      assert.deepEqual(
        finished.toSorted((a, b) => a - b),
        periods.map((p) => p.end).sort((a, b) => a - b),
      );
      assert.equal(stats.busyMs, arrivals.reduce((sum, a) => sum + a.ms, 0));
      assert.equal(stats.executions, arrivals.length);
    }),
    { numRuns: 60 },
  );
});

Deno.test("SimulatedDevices: a device never idles while a job waits (work-conserving FIFO)", async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 3 }), arrivalsArb, async (slots, arrivals) => {
      const { periods } = await replay(slots, arrivals, manualTimers());
      // Jobs start in arrival order, each at its arrival or when the first device frees.
      const freeAt = new Array<number>(slots).fill(0);
      for (const period of periods) {
        const earliest = Math.min(...freeAt);
        assert.equal(period.start, Math.max(period.arrivedAt, earliest));
        freeAt[freeAt.indexOf(earliest)] = period.end;
      }
    }),
    { numRuns: 60 },
  );
});

Deno.test("SimulatedDevices: late timers delay answers, not the device schedule", async () => {
  const clock = manualTimers({ lateMs: 1 });
  const { periods, finished } = await replay(1, [0, 0, 0].map(() => ({ gapMs: 0, ms: 2 })), clock);
  assert.deepEqual(periods.map((p) => [p.start, p.end]), [[0, 2], [2, 4], [4, 6]]);
  assert.deepEqual(finished, [3, 5, 7]);
});

Deno.test("SimulatedDevices: rejects bad device times and work after close; a throw spends the time", async () => {
  const clock = manualTimers();
  const periods: BusyPeriod[] = [];
  const devices = new SimulatedDevices({
    slots: 1,
    now: clock.now,
    sleep: clock.sleep,
    onBusy: (period) => periods.push(period),
  });
  await assert.rejects(devices.submit(-1, 1, () => 0), /device time must be >= 0/);
  await assert.rejects(devices.submit(Number.NaN, 1, () => 0), RangeError);
  const failed = devices.submit(3, 1, () => {
    throw new TypeError("bad input");
  });
  const next = devices.submit(1, 1, () => "done");
  await assert.rejects(failed, /bad input/);
  await clock.run();
  assert.deepEqual(await next, { value: "done", ms: 1 });
  assert.deepEqual(periods.map((p) => [p.start, p.end]), [[0, 3], [3, 4]], "the throw spent 3 ms");
  assert.throws(() => new SimulatedDevices({ slots: 0 }), /slots must be >= 1/);
  await devices.close();
  await assert.rejects(devices.submit(1, 1, () => 0), /closed/);
});
