import assert from "node:assert/strict";
import { createJsonLogger } from "./logger.ts";

function capture(level?: "debug" | "info" | "warn" | "error") {
  const lines: string[] = [];
  const logger = createJsonLogger({
    ...(level ? { level } : {}),
    base: { service: "router" },
    write: (line) => lines.push(line),
    now: () => Date.UTC(2024, 0, 2, 3, 4, 5),
  });
  return { logger, lines };
}

Deno.test("createJsonLogger() writes one JSON object per line with ts, level, msg and fields", () => {
  const { logger, lines } = capture();
  logger.info("backend up", { backend: "127.0.0.1:9001", models: ["tiny"] });
  assert.equal(lines.length, 1);
  assert.ok(lines[0]!.endsWith("\n"));
  assert.deepEqual(JSON.parse(lines[0]!), {
    ts: "2024-01-02T03:04:05.000Z",
    level: "info",
    msg: "backend up",
    service: "router",
    backend: "127.0.0.1:9001",
    models: ["tiny"],
  });
});

Deno.test("createJsonLogger() drops lines below the configured level", () => {
  const { logger, lines } = capture("warn");
  logger.debug("a");
  logger.info("b");
  logger.warn("c");
  logger.error("d");
  assert.deepEqual(lines.map((line) => JSON.parse(line).msg), ["c", "d"]);
});

Deno.test("createJsonLogger() redacts secret-looking fields and flattens errors", () => {
  const { logger, lines } = capture();
  logger.error("oops", {
    internal_token: "s3cr3t-s3cr3t-s3cr3t",
    authorization: "Bearer x",
    error: new TypeError("bad"),
    level: "not-overridden",
  });
  const record = JSON.parse(lines[0]!);
  assert.equal(record.internal_token, "[redacted]");
  assert.equal(record.authorization, "[redacted]");
  assert.deepEqual(record.error, { name: "TypeError", message: "bad" });
  assert.equal(record.level, "error");
  assert.ok(!lines[0]!.includes("s3cr3t"));
});

Deno.test("createJsonLogger() survives fields that cannot be serialised", () => {
  const { logger, lines } = capture();
  const cyclic: Record<string, unknown> = {};
  cyclic["self"] = cyclic;
  logger.warn("cyclic", { cyclic, big: 10n });
  assert.equal(JSON.parse(lines[0]!).msg, "cyclic");
});

Deno.test("createJsonLogger() says which levels it writes", () => {
  const logger = createJsonLogger({ level: "warn", write: () => {} });
  assert.deepEqual(
    (["debug", "info", "warn", "error"] as const).map((level) => logger.enabled!(level)),
    [false, false, true, true],
  );
});
