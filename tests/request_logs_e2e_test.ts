/**
 * End to end over real processes: a router and two backends writing their logs into a
 * temporary `log.dir`. One inference through the router leaves exactly one request line
 * in the router's log file whose expert trace matches the `expert_ids` the client got;
 * a rejected request is logged with its error; start events and backend lines carry
 * their fields.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { encodeExpertCounts, expertCountsFromIds } from "../shared/expert_trace.ts";
import { serviceLogPath } from "../shared/logging/service_logger.ts";
import { createRandom } from "../tools/model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { startPool } from "../tools/pool/processes.ts";
import { infer, postRaw } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { waitFor } from "./_support/wait_for.ts";

type LogLine = Record<string, unknown>;

async function readLines(path: string): Promise<LogLine[]> {
  try {
    const text = await Deno.readTextFile(path);
    return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/** Waits until `match` finds lines in `path` (the file is written asynchronously). */
async function waitForLines(path: string, match: (line: LogLine) => boolean): Promise<LogLine[]> {
  return await waitFor(`a matching line in ${path}`, async () => {
    const found = (await readLines(path)).filter(match);
    return found.length > 0 ? found : undefined;
  }, { timeoutMs: 10_000, intervalMs: 50, retryErrors: false });
}

Deno.test("the router's log file holds one request line per inference, with its expert trace", async () => {
  const modelDir = await makeTinyModel();
  const logDir = await Deno.makeTempDir({ prefix: "switchyard-logs-" });
  const traffic = (await loadDemoTraffic(modelDir))!;
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: { SWITCHYARD_LOG__DIR: logDir, SWITCHYARD_LOG__LEVEL: "info" },
  });
  const routerLog = serviceLogPath(logDir, "router");
  try {
    const rows = 5;
    const call = await infer(
      pool.router.url,
      TINY.name,
      demoTokens(traffic, "code", rows, createRandom(3)),
      TINY.dModel,
      {
        outputs: ["output", "expert_ids"],
        requestType: "code",
        headers: { "x-request-id": "e2e-ok-1" },
      },
    );
    assert.equal(call.status, 200, JSON.stringify(call.error));
    const ids = call.decoded!.tensors.get("expert_ids")!;
    const expected = encodeExpertCounts(
      expertCountsFromIds(Int32Array.from(ids.data), {
        layers: TINY.layers,
        rows,
        topK: TINY.topK,
      }),
    );

    const bad = await postRaw(
      `${pool.router.url}/v2/models/${TINY.name}/infer`,
      JSON.stringify({ inputs: [] }),
      { "content-type": "application/json", "x-request-id": "e2e-bad-1" },
    );
    assert.equal(bad.status, 400);

    const [ok] = await waitForLines(routerLog, (l) => l["request_id"] === "e2e-ok-1");
    assert.ok(ok, `no request line for e2e-ok-1 in ${routerLog}`);
    assert.equal(ok["msg"], "request");
    assert.equal(ok["event"], "request");
    assert.equal(ok["level"], "info");
    assert.equal(ok["service"], "router");
    assert.equal(ok["model"], TINY.name);
    assert.equal(ok["request_type"], "code");
    assert.equal(ok["rows"], rows);
    assert.equal(ok["status"], 200);
    assert.equal(ok["error"], null);
    assert.equal(ok["backend"], call.headers.get("x-switchyard-backend"));
    assert.match(String(ok["backend"]), /^backend-[12]$/);
    assert.equal(ok["experts"], expected);
    assert.equal(String(ok["experts"]).split(";").length, TINY.layers);
    const batches = String(ok["batches"]).split(";").map(Number);
    assert.equal(batches.length, TINY.layers);
    assert.ok(
      batches.every((groups) => Number.isInteger(groups) && groups >= 0),
      String(ok["batches"]),
    );
    assert.equal(typeof ok["ms"], "number");
    assert.ok(!Number.isNaN(Date.parse(String(ok["ts"]))));

    const [rejected] = await waitForLines(routerLog, (l) => l["request_id"] === "e2e-bad-1");
    assert.ok(rejected, "the 400 request is logged too");
    assert.equal(rejected["level"], "warn");
    assert.equal(rejected["status"], 400);
    assert.equal(rejected["error"], bad.error!.error);
    assert.equal(rejected["rows"], null);
    assert.equal(rejected["experts"], null);

    const lines = await readLines(routerLog);
    assert.equal(lines.filter((l) => l["request_id"] === "e2e-ok-1").length, 1, "exactly one line");
    assert.ok(lines.some((l) => l["event"] === "start" && l["msg"] === "router listening"));

    for (const id of ["backend-1", "backend-2"]) {
      const backendLines = await readLines(join(logDir, `backend-${id}.log`));
      const start = backendLines.find((l) => l["event"] === "start");
      assert.ok(start, `backend ${id} logged its start`);
      for (const line of backendLines) {
        assert.equal(line["service"], "backend");
        assert.equal(line["backend"], id);
        assert.equal(typeof line["level"], "string");
      }
    }
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
    await Deno.remove(logDir, { recursive: true });
  }
});
