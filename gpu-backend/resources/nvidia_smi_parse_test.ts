import assert from "node:assert/strict";
import { parseNvidiaSmi } from "./nvidia_smi_parse.ts";

const MIB = 1024 * 1024;

Deno.test("parseNvidiaSmi() reads one H100 line (MiB → bytes, % → share)", () => {
  // The format of `nvidia-smi -i 0 --query-gpu=... --format=csv,noheader,nounits` on an H100.
  const reading = parseNvidiaSmi(
    "GPU-5e3c0a1b-9f1d-4c1e-8a53-1d2e3f4a5b6c, 87, 30512, 81559, 312.45\n",
  );
  assert.deepEqual(reading, {
    devices: 1,
    utilisation: 0.87,
    memoryUsedBytes: 30512 * MIB,
    memoryTotalBytes: 81559 * MIB,
    powerW: 312.45,
    deviceIds: ["GPU-5e3c0a1b-9f1d-4c1e-8a53-1d2e3f4a5b6c"],
  });
});

Deno.test("parseNvidiaSmi() sums memory and power and averages utilisation over devices", () => {
  const sample = "GPU-a, 100, 1000, 16384, 70.00\r\nGPU-b, 50, 3000, 16384, 30.50\r\n";
  assert.deepEqual(parseNvidiaSmi(sample), {
    devices: 2,
    utilisation: 0.75,
    memoryUsedBytes: 4000 * MIB,
    memoryTotalBytes: 32768 * MIB,
    powerW: 100.5,
    deviceIds: ["GPU-a", "GPU-b"],
  });
});

Deno.test("parseNvidiaSmi() turns [N/A] and [Not Supported] into null, never a guess", () => {
  // A GeForce card without power readings, and a MIG-mode device without utilisation.
  assert.deepEqual(parseNvidiaSmi("GPU-c, 12, 800, 8192, [N/A]"), {
    devices: 1,
    utilisation: 0.12,
    memoryUsedBytes: 800 * MIB,
    memoryTotalBytes: 8192 * MIB,
    powerW: null,
    deviceIds: ["GPU-c"],
  });
  const mixed = parseNvidiaSmi(
    "GPU-a, [N/A], 500, 40960, 60.1\n[N/A], 40, 600, 40960, [Not Supported]\n",
  );
  assert.equal(mixed?.deviceIds, null, "a device without its UUID: no identities at all");
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
    parseNvidiaSmi(
      "uuid, utilization.gpu [%], memory.used [MiB], memory.total [MiB], power.draw [W]",
    ),
    null,
  );
  assert.equal(parseNvidiaSmi("GPU-a, 10, 20, 30"), null);
  assert.equal(parseNvidiaSmi("10, 20, 30, 40"), null, "the UUID column is missing");
  assert.equal(
    parseNvidiaSmi("GPU-a, -5, 20, 30, 40")?.utilisation,
    null,
    "negative is not a reading",
  );
});
