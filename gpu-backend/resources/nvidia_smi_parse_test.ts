import assert from "node:assert/strict";
import { parseNvidiaSmi } from "./nvidia_smi_parse.ts";

const MIB = 1024 * 1024;

Deno.test("parseNvidiaSmi() reads one H100 line (MiB → bytes, % → share)", () => {
  // Captured from `nvidia-smi --query-gpu=... --format=csv,noheader,nounits` on an H100.
  const reading = parseNvidiaSmi("87, 30512, 81559, 312.45\n");
  assert.deepEqual(reading, {
    devices: 1,
    utilisation: 0.87,
    memoryUsedBytes: 30512 * MIB,
    memoryTotalBytes: 81559 * MIB,
    powerW: 312.45,
  });
});

Deno.test("parseNvidiaSmi() sums memory and power and averages utilisation over devices", () => {
  const sample = "100, 1000, 16384, 70.00\r\n50, 3000, 16384, 30.50\r\n";
  assert.deepEqual(parseNvidiaSmi(sample), {
    devices: 2,
    utilisation: 0.75,
    memoryUsedBytes: 4000 * MIB,
    memoryTotalBytes: 32768 * MIB,
    powerW: 100.5,
  });
});

Deno.test("parseNvidiaSmi() turns [N/A] and [Not Supported] into null, never a guess", () => {
  // A GeForce card without power readings, and a MIG-mode device without utilisation.
  assert.deepEqual(parseNvidiaSmi("12, 800, 8192, [N/A]"), {
    devices: 1,
    utilisation: 0.12,
    memoryUsedBytes: 800 * MIB,
    memoryTotalBytes: 8192 * MIB,
    powerW: null,
  });
  const mixed = parseNvidiaSmi("[N/A], 500, 40960, 60.1\n40, 600, 40960, [Not Supported]\n");
  assert.equal(mixed?.utilisation, null, "one unknown device makes the mean unknown");
  assert.equal(mixed?.powerW, null);
  assert.equal(mixed?.memoryUsedBytes, 1100 * MIB);
});

Deno.test("parseNvidiaSmi() refuses output that is not the lines asked for", () => {
  assert.equal(parseNvidiaSmi(""), null);
  assert.equal(parseNvidiaSmi("\n  \n"), null);
  assert.equal(parseNvidiaSmi("No devices were found"), null);
  // A header line from a forgotten `noheader`, and a line with a missing column.
  assert.equal(
    parseNvidiaSmi("utilization.gpu [%], memory.used [MiB], memory.total [MiB], power.draw [W]"),
    null,
  );
  assert.equal(parseNvidiaSmi("10, 20, 30"), null);
  assert.equal(parseNvidiaSmi("-5, 20, 30, 40")?.utilisation, null, "negative is not a reading");
});
