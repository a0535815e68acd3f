import assert from "node:assert/strict";
import { join } from "node:path";
import { T0_MS, writeFixtureDir } from "../../../tests/_support/router/log_fixture.ts";
import { LocalLogStore, parseLocalLine, splitLines } from "./local_log_store.ts";
import { parseLogQL } from "./logql_parser.ts";
import { parseQueryRange } from "./query_range_params.ts";

function ask(store: LocalLogStore, query: string) {
  const range = parseQueryRange(
    new URLSearchParams({ start: String(T0_MS), since: "1h" }),
    T0_MS + 60_000,
  );
  return store.queryRange({ query, parsed: parseLogQL(query), range });
}

async function collect(chunks: string[], max = 100): Promise<(string | undefined)[]> {
  const out: (string | undefined)[] = [];
  for await (const line of splitLines(ReadableStream.from(chunks), max)) out.push(line);
  return out;
}

Deno.test("splitLines() joins chunks, handles CRLF and a last line without newline", async () => {
  assert.deepEqual(await collect(["a", "b\nc\r", "\n\nd"]), ["ab", "c", "", "d"]);
});

Deno.test("splitLines() reports an over-long line once and resumes after it", async () => {
  assert.deepEqual(await collect(["ok\n", "x".repeat(8), "y".repeat(8), "zz\nnext\n"], 10), [
    "ok",
    undefined,
    "next",
  ]);
});

Deno.test("parseLocalLine() takes ts, service, level and a backend's own id as stream labels", () => {
  const router = parseLocalLine(
    '{"ts":"2024-05-01T10:00:00.000Z","level":"info","service":"router","backend":"b1"}',
  );
  assert.equal(router?.ns, BigInt(T0_MS) * 1_000_000n);
  assert.deepEqual(router?.stream, { service: "router", level: "info" });
  assert.equal(router?.value["backend"], "b1");
  assert.deepEqual(
    parseLocalLine(
      '{"ts":"2024-05-01T10:00:00.000Z","level":"warn","service":"backend","backend":"b1"}',
    )?.stream,
    { service: "backend", level: "warn", backend: "b1" },
  );
  assert.equal(parseLocalLine('{"level":"info"}'), undefined);
  assert.equal(parseLocalLine('{"ts":"never"}'), undefined);
  assert.equal(parseLocalLine("[]"), undefined);
});

Deno.test("LocalLogStore skips malformed lines and non-log files, and says so", async () => {
  const dir = await writeFixtureDir();
  try {
    const response = await ask(new LocalLogStore({ dir }), '{service=~".+"}');
    const count = response.data.result.reduce((n, s) => n + s.values.length, 0);
    assert.equal(count, 9, "every fixture line, nothing from notes.txt or the junk");
    assert.deepEqual(response.warnings, [`skipped 3 malformed line(s) in ${dir}`]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("LocalLogStore reads nested folders and answers a missing or empty log.dir with a warning", async () => {
  const dir = await writeFixtureDir();
  try {
    await Deno.mkdir(join(dir, "old"));
    await Deno.rename(join(dir, "router.log.1"), join(dir, "old", "router.log.1"));
    const response = await ask(new LocalLogStore({ dir }), '{service="router", level="info"}');
    assert.equal(response.data.result[0]?.values.length, 3);
    const missing = await ask(new LocalLogStore({ dir: join(dir, "nope") }), '{service="router"}');
    assert.deepEqual(missing.data.result, []);
    assert.match(missing.warnings![0]!, /does not exist/);
    const stdout = await ask(new LocalLogStore({ dir: "" }), '{service="router"}');
    assert.match(stdout.warnings![0]!, /stdout only/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
