/**
 * Log queries end to end over real processes: a router and two backends writing their
 * JSON log lines to files under a temporary `log.dir`, inference requests through the
 * router, then `GET /api/logs` (the embedded store: no Loki configured) and
 * `deno task logs` as a subprocess, both reading those files back. A second pool ships
 * its logs to a stand-in Loki (tests/_support/loki_test_server.ts: no Loki server can be
 * installed here) and `GET /api/logs` forwards to it, tenant header included.
 */
import assert from "node:assert/strict";
import { createRandom } from "../tools/model/prng.ts";
import { gaussianTokens } from "../tools/model/traffic.ts";
import { infer } from "./_support/client.ts";
import { startPool } from "../tools/pool/processes.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { startLokiTestServer } from "./_support/loki_test_server.ts";
import { waitFor } from "./_support/wait_for.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const ADMIN_TOKEN = "e2e-admin-token-0123456789";
const REQUEST_LINES =
  '{service="router"} | json | msg="request" | line_format "{{.request_id}} {{.status}} {{.request_type}}"';

interface Streams {
  data: { result: { stream: Record<string, string>; values: [string, string][] }[] };
}

async function queryLogs(
  url: string,
  query: string,
  token = ADMIN_TOKEN,
): Promise<{ status: number; body: Streams & { error?: string } }> {
  const params = new URLSearchParams({ query, since: "10m", limit: "1000" });
  const response = await fetch(`${url}/api/logs?${params}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: await response.json() };
}

function values(body: Streams): [string, string][] {
  return body.data.result.flatMap((stream) => stream.values)
    .sort(([a], [b]) => (BigInt(a) < BigInt(b) ? -1 : 1));
}

/** Waits until `count` lines match (file writes are queued, so lines land a moment later). */
async function waitForLines(
  url: string,
  query: string,
  count: number,
): Promise<[string, string][]> {
  let found: [string, string][] = [];
  return await waitFor(`${count} lines for ${query}`, async () => {
    const { status, body } = await queryLogs(url, query);
    assert.equal(status, 200, JSON.stringify(body));
    found = values(body);
    return found.length >= count ? found : undefined;
  }, {
    timeoutMs: 20_000,
    intervalMs: 100,
    retryErrors: false,
    detail: () => `only ${found.length}: ${JSON.stringify(found)}`,
  });
}

Deno.test("log queries read back what a real pool wrote, through the API and the CLI", async (t) => {
  const modelDir = await makeTinyModel();
  const logDir = await Deno.makeTempDir({ prefix: "switchyard-e2e-logs-" });
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: {
      SWITCHYARD_LOG__DIR: logDir,
      SWITCHYARD_LOG__LEVEL: "info",
      SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN_TOKEN,
    },
  });
  const url = pool.router.url;
  const random = createRandom(5);
  try {
    const sent: string[] = [];
    for (const requestType of ["chat", "code", "math"]) {
      const call = await infer(
        url,
        TINY.name,
        gaussianTokens(TINY.dModel, 3, random),
        TINY.dModel,
        {
          requestType,
        },
      );
      assert.equal(call.status, 200, JSON.stringify(call.error));
      sent.push(`${call.headers.get("x-request-id")} 200 ${requestType}`);
    }

    await t.step(
      "request lines come back through json, a label filter and line_format",
      async () => {
        const found = await waitForLines(url, REQUEST_LINES, sent.length);
        assert.deepEqual(found.map(([, line]) => line), sent);
      },
    );

    await t.step("lifecycle lines carry the stream labels", async () => {
      const listening = await waitForLines(url, '{service="backend"} |= "backend listening"', 2);
      assert.equal(listening.length, 2);
      const { body } = await queryLogs(url, '{service="backend"} |= "backend listening"');
      assert.deepEqual(
        body.data.result.map((s) => s.stream).sort((a, b) =>
          a["backend"]! < b["backend"]! ? -1 : 1
        ),
        [
          { service: "backend", backend: "backend-1", level: "info" },
          { service: "backend", backend: "backend-2", level: "info" },
        ],
      );
      const router = await waitForLines(
        url,
        '{service="router", level="info"} |= "router listening"',
        1,
      );
      assert.equal(JSON.parse(router[0]![1]).msg, "router listening");
    });

    await t.step("the API refuses a missing token and names an unsupported construct", async () => {
      assert.equal(
        (await queryLogs(url, '{service="router"}', "wrong-token-0123456789")).status,
        401,
      );
      const unsupported = await queryLogs(url, '{service="router"} | logfmt');
      assert.equal(unsupported.status, 400);
      assert.equal(
        unsupported.body.error,
        'Unsupported LogQL: "logfmt" parser is not in the supported subset (json only)',
      );
    });

    await t.step("deno task logs prints the lines, newest last", async () => {
      const output = await new Deno.Command(Deno.execPath(), {
        args: ["task", "-q", "logs", REQUEST_LINES, "--url", url, "--since", "10m"],
        cwd: ROOT,
        env: { SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN_TOKEN, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(output.stderr);
      assert.equal(output.code, 0, stderr);
      const lines = new TextDecoder().decode(output.stdout).trim().split("\n");
      assert.equal(lines.length, sent.length, lines.join("\n"));
      lines.forEach((line, i) => {
        assert.match(line, /^\d{4}-\d{2}-\d{2}T\S+Z \{level="info", service="router"\} /);
        assert.ok(line.endsWith(` ${sent[i]}`), `${line} should end with ${sent[i]}`);
      });
    });
  } finally {
    await pool.close();
    await Deno.remove(logDir, { recursive: true });
    await Deno.remove(modelDir, { recursive: true });
  }
});

Deno.test("with loki.url set, the pool ships to Loki and GET /api/logs forwards there", async () => {
  const modelDir = await makeTinyModel();
  // The one query this test sends, answered by hand from the pushed request lines.
  const loki = startLokiTestServer({
    answer: (params, entries) => {
      if (params["query"] !== REQUEST_LINES) return undefined;
      const result = entries.flatMap((entry) => {
        const fields = JSON.parse(entry.line);
        if (entry.labels["service"] !== "router" || fields.msg !== "request") return [];
        return [{
          stream: entry.labels,
          values: [[
            String(entry.ns),
            `${fields.request_id} ${fields.status} ${fields.request_type}`,
          ]],
        }];
      });
      return { status: "success", data: { resultType: "streams", result } };
    },
  });
  const pool = await startPool({
    modelDir,
    backends: 1,
    env: {
      SWITCHYARD_LOG__DIR: "",
      SWITCHYARD_LOG__LEVEL: "info",
      SWITCHYARD_LOKI__URL: loki.url,
      SWITCHYARD_LOKI__TENANT: "team-a",
      SWITCHYARD_LOKI__BATCH_INTERVAL: "100ms",
      SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN_TOKEN,
    },
  });
  try {
    const call = await infer(
      pool.router.url,
      TINY.name,
      gaussianTokens(TINY.dModel, 2, createRandom(9)),
      TINY.dModel,
      { requestType: "chat" },
    );
    assert.equal(call.status, 200, JSON.stringify(call.error));
    const id = call.headers.get("x-request-id");
    const found = await waitForLines(pool.router.url, REQUEST_LINES, 1);
    assert.deepEqual(found.map(([, line]) => line), [`${id} 200 chat`]);
    const pushes = loki.requests.filter((r) => r.path === "/loki/api/v1/push");
    const queries = loki.requests.filter((r) => r.path === "/loki/api/v1/query_range");
    assert.ok(pushes.length > 0 && pushes.every((r) => r.tenant === "team-a"));
    assert.ok(queries.length > 0 && queries.every((r) => r.tenant === "team-a"));
    assert.equal(queries.at(-1)!.params["query"], REQUEST_LINES);
  } finally {
    await pool.close();
    await loki.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
