import assert from "node:assert/strict";
import {
  appendServerTiming,
  formatServerTiming,
  parseServerTiming,
  serverTimingMs,
} from "./server_timing.ts";

Deno.test("formatServerTiming() writes W3C syntax that parseServerTiming() reads back", () => {
  const header = formatServerTiming([
    { name: "queue", ms: 0.25 },
    { name: "hop", ms: 1.5, desc: 'one layer, "2" rows, peer 0.9 ms' },
    { name: "host", ms: -0.001 },
  ]);
  assert.equal(
    header,
    'queue;dur=0.250, hop;dur=1.500;desc="one layer, 2 rows, peer 0.9 ms", host;dur=0.000',
  );
  assert.deepEqual(parseServerTiming(header), [
    { name: "queue", ms: 0.25 },
    { name: "hop", ms: 1.5, desc: "one layer, 2 rows, peer 0.9 ms" },
    { name: "host", ms: 0 },
  ]);
});

Deno.test("parseServerTiming() skips what it cannot read and accepts a missing dur", () => {
  assert.deepEqual(parseServerTiming(null), []);
  assert.deepEqual(parseServerTiming("cache, ;dur=3, db;dur=abc, x y;dur=1"), [
    { name: "cache", ms: 0 },
    { name: "db", ms: 0 },
  ]);
});

Deno.test("serverTimingMs() finds one metric's duration; appendServerTiming() adds to a header", () => {
  const header = 'hop;dur=1.5;desc="backend;dur=9", backend;dur=3.250';
  assert.equal(serverTimingMs(header, "backend"), 3.25);
  assert.equal(serverTimingMs(header, "hop"), 1.5);
  assert.equal(serverTimingMs(header, "total"), null);
  assert.equal(serverTimingMs(null, "backend"), null);
  assert.equal(appendServerTiming(null, [{ name: "a", ms: 1 }]), "a;dur=1.000");
  assert.equal(appendServerTiming("x;dur=2", [{ name: "a", ms: 1 }]), "x;dur=2, a;dur=1.000");
});
