import assert from "node:assert/strict";
import { createJsonLogger } from "../../../shared/logger.ts";
import type { InferenceEvent } from "../../serve/observe/inference_event.ts";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { requestLogObserver } from "./request_log.ts";

const answered: InferenceEvent = {
  requestId: "req-1",
  model: "tiny-moe",
  requestType: "code",
  rows: 3,
  backend: "backend-2",
  experts: [new Map([[7, 3], [3, 3]]), new Map([[1, 6]])],
  batches: [4, 6],
  status: 200,
  ms: 12.3456,
  at: 1_700_000_000_000,
};

Deno.test("requestLogObserver() writes one info line with every request field", () => {
  const logger = new MemoryLogger();
  requestLogObserver(logger)(answered);
  assert.equal(logger.records.length, 1);
  const [record] = logger.records;
  assert.equal(record!.level, "info");
  assert.equal(record!.msg, "request");
  assert.deepEqual(record!.fields, {
    event: "request",
    request_id: "req-1",
    model: "tiny-moe",
    request_type: "code",
    backend: "backend-2",
    experts: "3*3,7*3;1*6",
    batches: "4;6",
    rows: 3,
    ms: 12.35,
    status: 200,
    error: null,
  });
});

Deno.test("requestLogObserver() logs failed requests at warn with the error and null unknowns", () => {
  const logger = new MemoryLogger();
  const observe = requestLogObserver(logger);
  for (const status of [400, 503]) {
    observe({
      ...answered,
      status,
      rows: undefined,
      backend: undefined,
      experts: undefined,
      batches: undefined,
      requestType: undefined,
      error: `Cannot run inference: ${status}`,
    });
  }
  assert.deepEqual(logger.records.map((r) => r.level), ["warn", "warn"]);
  const fields = logger.records[1]!.fields;
  assert.equal(fields["status"], 503);
  assert.equal(fields["error"], "Cannot run inference: 503");
  assert.equal(fields["rows"], null);
  assert.equal(fields["backend"], null);
  assert.equal(fields["experts"], null);
  assert.equal(fields["request_type"], null);
});

Deno.test("request lines are one JSON object with ts, level, msg and service", () => {
  const lines: string[] = [];
  const logger = createJsonLogger({
    base: { service: "router" },
    write: (line) => lines.push(line),
    now: () => answered.at,
  });
  requestLogObserver(logger)(answered);
  assert.equal(lines.length, 1);
  assert.ok(lines[0]!.endsWith("\n"));
  const parsed = JSON.parse(lines[0]!);
  assert.equal(parsed.ts, new Date(answered.at).toISOString());
  assert.equal(parsed.level, "info");
  assert.equal(parsed.msg, "request");
  assert.equal(parsed.service, "router");
  assert.equal(parsed.event, "request");
  assert.equal(parsed.experts, "3*3,7*3;1*6");
});

Deno.test("requestLogObserver() builds no line below the log level and still logs failures", () => {
  const lines: string[] = [];
  const logger = createJsonLogger({ level: "warn", write: (line) => lines.push(line) });
  const asked: string[] = [];
  const observe = requestLogObserver({
    ...logger,
    enabled: (level) => {
      asked.push(level);
      return logger.enabled!(level);
    },
  });
  observe(answered);
  assert.deepEqual(lines, []);
  observe({ ...answered, status: 503, error: "full" });
  assert.equal(lines.length, 1);
  assert.equal(JSON.parse(lines[0]!).status, 503);
  assert.deepEqual(asked, ["info", "warn"]);
});

Deno.test("requestLogObserver() writes no line for a request shed at admission (429: counted instead)", () => {
  const logger = new MemoryLogger();
  const observe = requestLogObserver(logger);
  observe({
    requestId: "r",
    model: "m",
    requestType: undefined,
    rows: undefined,
    backend: undefined,
    experts: undefined,
    batches: undefined,
    status: 429,
    ms: 0.1,
    at: 0,
    error: "Cannot run inference: every backend has 64 requests in flight",
  });
  assert.equal(logger.records.length, 0);
});
