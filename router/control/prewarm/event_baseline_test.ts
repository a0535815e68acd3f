import assert from "node:assert/strict";
import fc from "fast-check";
import { eventFactor, withoutEvents } from "./event_baseline.ts";

const MIN = 60_000;
const event = (start: number, end: number, multiplier: number) => ({ start, end, multiplier });

Deno.test("eventFactor(): hand-computed buckets inside, across and outside an event", () => {
  const fiveX = [event(10 * MIN, 20 * MIN, 5)];
  assert.equal(eventFactor(9 * MIN, MIN, fiveX), 1, "ends where the event starts");
  assert.equal(eventFactor(10 * MIN, MIN, fiveX), 5, "wholly inside");
  assert.equal(eventFactor(20 * MIN, MIN, fiveX), 1, "starts where the event ends");
  // 15 s of a minute inside a 5× event: 1 + 0.25 × 4 = 2.
  const late = [event(10 * MIN - 15_000, 20 * MIN, 5)];
  assert.equal(eventFactor(9 * MIN, MIN, late), 2);
  // Overlapping events: the larger multiplier counts, as in the job.
  assert.equal(eventFactor(12 * MIN, MIN, [...fiveX, event(11 * MIN, 13 * MIN, 2)]), 5);
  assert.equal(eventFactor(12 * MIN, MIN, [event(0, 30 * MIN, 0)]), 1, "a 0 multiplier is ignored");
});

Deno.test("withoutEvents(): a 5× event in the history comes back to the baseline", () => {
  // 40 tokens a minute, minutes 3–5 at 5× (200), minute 2 a quarter inside (40 × 2 = 80).
  const history = [40, 40, 80, 200, 200, 200, 40];
  const events = [event(2 * MIN + 45_000, 6 * MIN, 5)];
  assert.deepEqual(withoutEvents(history, 0, MIN, events), [40, 40, 40, 40, 40, 40, 40]);
  assert.deepEqual(withoutEvents(history, 0, MIN, []), history);
});

Deno.test("withoutEvents() then the event's factor gives the history back (all buckets)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { maxLength: 30 }),
      fc.integer({ min: 0, max: 30 * MIN }),
      fc.integer({ min: 1, max: 30 * MIN }),
      fc.double({ min: 0.1, max: 20, noNaN: true }),
      (values, start, length, multiplier) => {
        const events = [event(start, start + length, multiplier)];
        const base = withoutEvents(values, 0, MIN, events);
        base.forEach((b, i) => {
          const back = b * eventFactor(i * MIN, MIN, events);
          assert.ok(Math.abs(back - values[i]!) <= 1e-9 * Math.max(1, values[i]!));
        });
      },
    ),
  );
});
