import assert from "node:assert/strict";
import { join } from "node:path";
import type { StreamsResponse } from "../router/operate/logs/streams_result.ts";
import { formatEntries, formatMatrix } from "./logs.ts";
import { randomToken, readAdminToken, writeTokenFile } from "./token_files.ts";

Deno.test("formatEntries() prints oldest first with the stream labels as prefix", () => {
  const t = (ms: number) => String(BigInt(Date.UTC(2024, 4, 1, 10, 0, 0) + ms) * 1_000_000n);
  const response: StreamsResponse = {
    status: "success",
    data: {
      resultType: "streams",
      result: [
        {
          stream: { service: "router", level: "warn", status: "503", backend: "b2" },
          values: [[t(3000), "c"], [t(1000), "a"]],
        },
        {
          stream: { service: "backend", backend: "b1", level: "info" },
          values: [[t(2000), "b"]],
        },
      ],
    },
  };
  assert.deepEqual(formatEntries(response), [ // a router line's backend (json) is not a stream label
    '2024-05-01T10:00:01.000Z {level="warn", service="router"} a',
    '2024-05-01T10:00:02.000Z {backend="b1", level="info", service="backend"} b',
    '2024-05-01T10:00:03.000Z {level="warn", service="router"} c',
  ]);
  assert.equal(
    formatEntries(response, { allLabels: true })[0],
    '2024-05-01T10:00:01.000Z {backend="b2", level="warn", service="router", status="503"} a',
  );
});

Deno.test("writeTokenFile() writes an owner-only file that readAdminToken() reads; env wins", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "data", "admin_token");
    await Deno.writeTextFile(join(dir, "old"), "x", { mode: 0o644 });
    const token = randomToken();
    assert.match(token, /^[0-9a-f]{48}$/);
    await writeTokenFile(path, token);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    await writeTokenFile(path, randomToken()); // replaces, still 0600
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    await writeTokenFile(path, token);
    assert.equal(await readAdminToken({}, path), token);
    assert.equal(
      await readAdminToken({ SWITCHYARD_AUTH__ADMIN_TOKEN: "from-env-0123456789" }, path),
      "from-env-0123456789",
    );
    assert.equal(await readAdminToken({}, join(dir, "missing")), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("formatMatrix() prints one row per step and one column per series", () => {
  const t0 = Date.UTC(2024, 4, 1, 10, 0, 0) / 1000;
  const lines = formatMatrix({
    status: "success",
    data: {
      resultType: "matrix",
      result: [
        { metric: { service: "backend" }, values: [[t0 + 6, "4"]] },
        { metric: { service: "router" }, values: [[t0 + 3, "4"], [t0 + 6, "5"]] },
      ],
    },
  });
  assert.deepEqual(lines, [
    'time                      {service="backend"}  {service="router"}',
    "2024-05-01T10:00:03.000Z  -                    4",
    "2024-05-01T10:00:06.000Z  4                    5",
  ]);
});
