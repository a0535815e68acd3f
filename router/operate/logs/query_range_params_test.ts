import assert from "node:assert/strict";
import { parseDurationMs, parseQueryRange, parseTimestampNs } from "./query_range_params.ts";

const NOW = Date.UTC(2024, 4, 1, 12, 0, 0);
const NOW_NS = BigInt(NOW) * 1_000_000n;

Deno.test("parseTimestampNs() reads RFC3339 and unix s / ms / µs / ns / fractional seconds", () => {
  const s = 1714557600n; // 2024-05-01T10:00:00Z
  assert.equal(parseTimestampNs("2024-05-01T10:00:00Z"), s * 1_000_000_000n);
  assert.equal(parseTimestampNs("2024-05-01T12:00:00+02:00"), s * 1_000_000_000n);
  assert.equal(parseTimestampNs("2024-05-01T10:00:00.123456789Z"), s * 1_000_000_000n + 123456789n);
  assert.equal(parseTimestampNs("1714557600"), s * 1_000_000_000n);
  assert.equal(parseTimestampNs("1714557600250"), s * 1_000_000_000n + 250_000_000n);
  assert.equal(parseTimestampNs("1714557600250000"), s * 1_000_000_000n + 250_000_000n);
  assert.equal(parseTimestampNs("1714557600250000001"), s * 1_000_000_000n + 250_000_001n);
  assert.equal(parseTimestampNs("1714557600.25"), s * 1_000_000_000n + 250_000_000n);
  assert.throws(() => parseTimestampNs("yesterday"), RangeError);
  assert.throws(() => parseTimestampNs("2024-13-45T10:00:00Z"), RangeError);
});

Deno.test("parseDurationMs() reads Prometheus durations", () => {
  assert.equal(parseDurationMs("1h"), 3_600_000);
  assert.equal(parseDurationMs("1h30m"), 5_400_000);
  assert.equal(parseDurationMs("250ms"), 250);
  assert.equal(parseDurationMs("2d"), 172_800_000);
  assert.throws(() => parseDurationMs("1 hour"), RangeError);
  assert.throws(() => parseDurationMs("0s"), RangeError);
});

Deno.test("parseQueryRange() defaults: the last hour, limit 100, backward", () => {
  assert.deepEqual(parseQueryRange(new URLSearchParams(), NOW), {
    startNs: NOW_NS - 3_600_000_000_000n,
    endNs: NOW_NS,
    limit: 100,
    direction: "backward",
  });
  const since = parseQueryRange(
    new URLSearchParams({ since: "5m", direction: "forward", limit: "5000" }),
    NOW,
  );
  assert.equal(since.startNs, NOW_NS - 300_000_000_000n);
  assert.equal(since.direction, "forward");
  assert.equal(since.limit, 5000);
});

Deno.test("parseQueryRange() names the bad field", () => {
  const bad = (params: Record<string, string>, message: RegExp) =>
    assert.throws(() => parseQueryRange(new URLSearchParams(params), NOW), message);
  bad({ limit: "0" }, /^RangeError: limit: must be between 1 and 5000, got 0$/);
  bad({ limit: "5001" }, /limit: must be between 1 and 5000/);
  bad({ limit: "ten" }, /limit: must be a positive integer, got "ten"/);
  bad({ direction: "up" }, /direction: must be "forward" or "backward", got "up"/);
  bad({ start: "soon" }, /start: "soon" is not an RFC3339 time or a unix timestamp/);
  bad({ since: "forever" }, /since: "forever" is not a duration/);
  bad({ start: "1714557600", end: "1714557600" }, /end: must be after start/);
});
