import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../config.ts";
import { createServiceLogger, serviceLogPath } from "./service_logger.ts";

function configFor(log: Record<string, unknown>) {
  return resolveConfig({ fileText: JSON.stringify({ log }) });
}

Deno.test("serviceLogPath() names the file after the service and a file-safe instance", () => {
  assert.equal(serviceLogPath("logs", "router"), join("logs", "router.log"));
  assert.equal(
    serviceLogPath("logs", "backend", "backend-1"),
    join("logs", "backend-backend-1.log"),
  );
  assert.equal(
    serviceLogPath("logs", "backend", "127.0.0.1:9001"),
    join("logs", "backend-127.0.0.1_9001.log"),
  );
});

Deno.test("createServiceLogger() writes the stdout lines into the rotating file too", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const stdout: string[] = [];
    const pipeline = createServiceLogger(
      configFor({ dir, level: "debug", max_file_bytes: 1_000_000, max_files: 2 }),
      { service: "backend", instance: "backend-2", stdout: (line) => stdout.push(line) },
    );
    pipeline.logger.debug("detail", { n: 1 });
    pipeline.logger.error("broke", { authorization: "Bearer x" });
    await pipeline.close();
    const text = await Deno.readTextFile(join(dir, "backend-backend-2.log"));
    assert.equal(text, stdout.join(""));
    const lines = text.trimEnd().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(lines.map((l) => [l.level, l.msg, l.service, l.backend]), [
      ["debug", "detail", "backend", "backend-2"],
      ["error", "broke", "backend", "backend-2"],
    ]);
    assert.ok(lines.every((l) => !Number.isNaN(Date.parse(l.ts))));
    assert.equal(lines[1].authorization, "[redacted]");
    assert.deepEqual(pipeline.stats(), { shipped: 0, dropped: 0, buffered: 0, failedPushes: 0 });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createServiceLogger() with an empty log.dir writes stdout only", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const stdout: string[] = [];
    const pipeline = createServiceLogger(configFor({ dir: "" }), {
      service: "router",
      stdout: (line) => stdout.push(line),
    });
    pipeline.logger.info("router listening", { event: "start" });
    pipeline.logger.debug("below the level");
    await pipeline.close();
    assert.equal(stdout.length, 1);
    assert.equal(JSON.parse(stdout[0]!).service, "router");
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createServiceLogger() never throws into the caller when its sinks fail", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const blocker = join(dir, "file-not-dir");
    await Deno.writeTextFile(blocker, "");
    const pipeline = createServiceLogger(configFor({ dir: blocker }), {
      service: "router",
      stdout: () => {
        throw new Error("stdout closed");
      },
    });
    pipeline.logger.info("one");
    pipeline.logger.info("two");
    await pipeline.close();
    assert.equal(pipeline.stats().dropped, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
