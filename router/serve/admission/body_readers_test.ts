import assert from "node:assert/strict";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { BodyReaders } from "./body_readers.ts";

Deno.test("BodyReaders: up to max_body_readers slots, then none while every read is young", () => {
  const clock = new ManualClock();
  const readers = new BodyReaders({ maxReaders: 2, graceMs: 1000 }, clock);
  const a = readers.tryEnter()!;
  const b = readers.tryEnter()!;
  assert.equal(readers.reading, 2);
  clock.stall(999);
  assert.equal(readers.tryEnter(), undefined);
  assert.equal(a.signal.aborted || b.signal.aborted, false);
  // A finished read frees its slot (releasing twice is harmless).
  a.release();
  a.release();
  assert.equal(readers.reading, 1);
  assert.ok(readers.tryEnter() !== undefined);
  assert.equal(readers.evicted, 0);
});

Deno.test("BodyReaders: when full, a new read takes the slot of the oldest read past the grace", () => {
  const clock = new ManualClock();
  const readers = new BodyReaders({ maxReaders: 2, graceMs: 1000 }, clock);
  const oldest = readers.tryEnter()!;
  clock.stall(500);
  const younger = readers.tryEnter()!;
  clock.stall(500);
  const fresh = readers.tryEnter();
  assert.ok(fresh !== undefined);
  assert.equal(oldest.signal.aborted, true);
  assert.match(String(oldest.signal.reason), /router\.admission\.max_body_readers \(2\)/);
  assert.equal(younger.signal.aborted, false);
  assert.equal(readers.reading, 2);
  assert.equal(readers.evicted, 1);
  // The evicted read's own release (when its handler ends) frees nothing twice.
  oldest.release();
  assert.equal(readers.reading, 2);
  // Next in line is `younger`, 500 ms old: not yet past the grace.
  assert.equal(readers.tryEnter(), undefined);
  clock.stall(500);
  assert.ok(readers.tryEnter() !== undefined);
  assert.equal(younger.signal.aborted, true);
});
