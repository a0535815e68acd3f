/**
 * @module Test fixture: a small set of Switchyard log lines (router and two backends,
 * request lines and lifecycle events) as the log writer produces them, written either
 * as local log files (with a rotated file, a gzipped one and junk lines) or pushed to a
 * Loki with the same stream labels.
 */
import { join } from "node:path";

/** 2024-05-01T10:00:00Z in ms. */
export const T0_MS = Date.UTC(2024, 4, 1, 10, 0, 0);

/** `T0 + offsetMs` as unix ns (string, as Loki writes it). */
export function ns(offsetMs: number): string {
  return String(BigInt(T0_MS + offsetMs) * 1_000_000n);
}

function line(offsetMs: number, fields: Record<string, unknown>): string {
  return JSON.stringify({ ts: new Date(T0_MS + offsetMs).toISOString(), ...fields });
}

const request = (offsetMs: number, level: string, fields: Record<string, unknown>) =>
  line(offsetMs, {
    level,
    msg: "request",
    service: "router",
    event: "request",
    batches: 1,
    rows: 2,
    ...fields,
  });

/** The fixture lines by file (`router.log.1` is the older, rotated router file). */
export const FIXTURE_FILES: Record<string, string[]> = {
  "router.log.1": [
    line(0, {
      level: "info",
      msg: "router listening",
      service: "router",
      url: "http://127.0.0.1:8080",
    }),
    request(1000, "info", {
      request_id: "req-1",
      model: "demo-moe",
      request_type: "chat",
      backend: "backend-1",
      experts: "0:1,2;1:3,4",
      ms: 3.5,
      status: 200,
    }),
    request(2000, "info", {
      request_id: "req-2",
      model: "demo-moe",
      request_type: "code",
      backend: "backend-2",
      experts: "0:5,6;1:7,0",
      ms: 12.25,
      status: 200,
    }),
  ],
  "router.log": [
    request(3000, "warn", {
      request_id: "req-3",
      model: "demo-moe",
      request_type: "code",
      backend: "backend-1",
      experts: "0:1,5;1:3,7",
      ms: 40,
      status: 503,
    }),
    request(4000, "error", {
      request_id: "req-4",
      model: "demo-moe",
      request_type: "math",
      backend: "backend-2",
      experts: "0:2,3;1:4,6",
      ms: 120,
      status: 500,
      error: "backend exploded",
    }),
  ],
  "backend-1.log": [
    line(500, {
      level: "info",
      msg: "backend listening",
      service: "backend",
      backend: "backend-1",
    }),
    line(5000, {
      level: "warn",
      msg: "executor slow",
      service: "backend",
      backend: "backend-1",
      detail: { layer: 1, queue: { rows: 7 } },
    }),
  ],
  "backend-2.log.1.gz": [
    line(600, {
      level: "info",
      msg: "backend listening",
      service: "backend",
      backend: "backend-2",
    }),
  ],
  "backend-2.log": [
    line(6000, {
      level: "error",
      msg: "plan switch failed",
      service: "backend",
      backend: "backend-2",
    }),
  ],
};

/** Lines a reader must skip: not JSON, no `ts`, a JSON array. */
export const JUNK_LINES = ["not json at all", '{"level":"info","msg":"no ts"}', "[1,2,3]"];

/** Every fixture line with its stream labels (service, backend, level) and time. */
export function fixtureEntries(): { ns: string; labels: Record<string, string>; line: string }[] {
  return Object.values(FIXTURE_FILES).flat().map((text) => {
    const record = JSON.parse(text);
    const labels: Record<string, string> = { service: record.service, level: record.level };
    if (record.service === "backend") labels["backend"] = record.backend;
    return { ns: String(BigInt(Date.parse(record.ts)) * 1_000_000n), labels, line: text };
  });
}

/** Writes the fixture files (plus junk lines in `backend-1.log`) into a new temp dir. */
export async function writeFixtureDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "switchyard-logs-" });
  for (const [name, lines] of Object.entries(FIXTURE_FILES)) {
    const body = [...lines, ...(name === "backend-1.log" ? JUNK_LINES : [])].join("\n") + "\n";
    const bytes = new TextEncoder().encode(body);
    const data = name.endsWith(".gz")
      ? new Uint8Array(
        await new Response(
          new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip")),
        ).arrayBuffer(),
      )
      : bytes;
    await Deno.writeFile(join(dir, name), data);
  }
  await Deno.writeTextFile(join(dir, "notes.txt"), "not a log file\n");
  return dir;
}

/** The fixture line written at `T0 + offsetMs` (each offset has one line). */
export function fixtureLine(offsetMs: number): string {
  const ts = new Date(T0_MS + offsetMs).toISOString();
  const found = Object.values(FIXTURE_FILES).flat().find((text) => JSON.parse(text).ts === ts);
  if (found === undefined) throw new Error(`no fixture line at T0 + ${offsetMs} ms`);
  return found;
}
