/**
 * Hostile input against a real router and backend (issue 12 item 5): a body nested a
 * million deep and an FP32 overflow get a 400 naming the limit or the field from either
 * process; a client hanging up mid-body is counted (`switchyard_input_faults_total`),
 * not answered 500 or logged as an error; a slow body gets 408 and its connection
 * closed. Afterwards the pool serves, and no process logged an error.
 */
import assert from "node:assert/strict";
import { findSamples, parseExposition } from "../shared/metrics/parse_exposition.ts";
import { MAX_JSON_DEPTH } from "../shared/json_depth.ts";
import { startPool } from "../tools/pool/processes.ts";
import { infer, postRaw } from "./_support/client.ts";
import { readUntil, readUntilClosed, sendPartial } from "../tools/net/raw_http.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { waitFor } from "./_support/wait_for.ts";

const D = TINY.dModel;
const DEEP = 1_000_000;

function deepBody(): string {
  return `{"inputs":[{"name":"input","shape":[1,${D}],"datatype":"FP32","data":${
    "[".repeat(DEEP)
  }1${"]".repeat(DEEP)}}]}`;
}

function overflowBody(): string {
  const data = Array.from({ length: D }, () => 0.5).join(",").replace(/^0\.5/, "1e39");
  return `{"inputs":[{"name":"input","shape":[1,${D}],"datatype":"FP32","data":[${data}]}]}`;
}

async function faults(url: string, kind: string, token?: string): Promise<number> {
  const response = await fetch(`${url}/metrics`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const text = parseExposition(await response.text());
  return findSamples(text, "switchyard_input_faults_total", { kind })[0]?.value ?? 0;
}

Deno.test("hostile bodies: 4xx naming the limit, disconnects counted, slow bodies 408", async (t) => {
  const modelDir = await makeTinyModel();
  const logDir = await Deno.makeTempDir({ prefix: "switchyard-hostile-" });
  const pool = await startPool({
    modelDir,
    backends: 1,
    env: {
      SWITCHYARD_LIMITS__BODY_TIMEOUT: "1s",
      SWITCHYARD_LIMITS__MAX_BODY_BYTES: String(4 * 1024 * 1024),
      SWITCHYARD_LOG__DIR: logDir,
    },
  });
  const backend = pool.backends[0]!.url;
  const auth = { authorization: `Bearer ${pool.token}` };
  const targets = [
    { name: "router", url: pool.router.url, headers: {} },
    { name: "backend", url: backend, headers: auth },
  ];
  try {
    for (const target of targets) {
      const url = `${target.url}/v2/models/${TINY.name}/infer`;
      const headers = { "content-type": "application/json", ...target.headers };

      await t.step(`${target.name}: JSON nested ${DEEP} deep → 400 naming the limit`, async () => {
        const call = await postRaw(url, deepBody(), headers);
        assert.equal(call.status, 400, JSON.stringify(call.error));
        assert.match(
          call.error!.error,
          new RegExp(`deeper than ${MAX_JSON_DEPTH} levels \\(the limit\\)`),
        );
      });

      await t.step(`${target.name}: 1e39 → 400 naming the field`, async () => {
        const call = await postRaw(url, overflowBody(), headers);
        assert.equal(call.status, 400, JSON.stringify(call.error));
        assert.match(call.error!.error, /inputs\[0\]\.data\[0\] is 1e\+39, beyond FP32's range/);
      });

      await t.step(`${target.name}: a client hanging up mid-body is counted`, async () => {
        const token = target.name === "backend" ? pool.token : undefined;
        const before = await faults(target.url, "client_disconnected", token);
        const conn = await sendPartial({
          url,
          headers: target.headers,
          contentLength: 10_000,
          sent: '{"inputs":[{"name":"input"',
        });
        // Let the handler start reading, then hang up.
        await new Promise((r) => setTimeout(r, 200));
        conn.close();
        const after = await waitFor("client_disconnected to count the hang-up", async () => {
          const count = await faults(target.url, "client_disconnected", token);
          return count >= before + 1 ? count : undefined;
        }, { timeoutMs: 60_000, intervalMs: 100, retryErrors: false });
        assert.ok(after >= before + 1, `client_disconnected stayed at ${after}`);
      });

      await t.step(`${target.name}: a slow body gets 408 and is counted`, async () => {
        const token = target.name === "backend" ? pool.token : undefined;
        const before = await faults(target.url, "body_timeout", token);
        const conn = await sendPartial({
          url,
          headers: target.headers,
          contentLength: 10_000,
          sent: '{"inputs":',
        });
        const answer = await readUntil(conn, /limits\.body_timeout/);
        assert.match(answer, /^HTTP\/1\.1 408 /);
        assert.match(answer, /connection: close/i);
        assert.ok(await faults(target.url, "body_timeout", token) >= before + 1);
      });

      await t.step(`${target.name}: an oversized body is cut off: 413 and closed`, async () => {
        const conn = await sendPartial({
          url,
          headers: { ...target.headers, "transfer-encoding": "chunked" },
          contentLength: -1,
          sent: `500000\r\n${"x".repeat(0x500000)}\r\n`,
        });
        const answer = await readUntilClosed(conn, 60_000);
        assert.match(answer.text, /^HTTP\/1\.1 413 /);
        assert.equal(answer.closed, true);
      });
    }

    await t.step("the pool still serves", async () => {
      const call = await infer(pool.router.url, TINY.name, new Float32Array(2 * D).fill(0.25), D);
      assert.equal(call.status, 200);
    });
  } finally {
    await pool.close();
  }
  try {
    await t.step("no process logged an error", async () => {
      for await (const entry of Deno.readDir(logDir)) {
        const text = await Deno.readTextFile(`${logDir}/${entry.name}`);
        const errors = text.split("\n").filter((line) => line.includes('"level":"error"'));
        assert.deepEqual(errors, [], `${entry.name} logged errors`);
      }
    });
  } finally {
    await Deno.remove(logDir, { recursive: true });
    await Deno.remove(modelDir, { recursive: true });
  }
});
