/**
 * Every kind of bad input through a real router and backend: a 4xx whose message
 * names the field, and the pool keeps serving afterwards.
 */
import assert from "node:assert/strict";
import { joinBinaryBody } from "../shared/binary_tensor.ts";
import { infer, postRaw } from "./_support/client.ts";
import { startPool } from "../tools/pool/processes.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

const D = TINY.dModel;

function jsonBody(input: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", ...input }], ...extra });
}

const ones = (n: number) => Array.from({ length: n }, () => 1);

const cases: {
  name: string;
  body: () => Uint8Array<ArrayBuffer> | string;
  headers?: Record<string, string>;
  status: number;
  message: RegExp;
}[] = [
  { name: "malformed JSON", body: () => '{"inputs": [', status: 400, message: /not valid JSON/ },
  { name: "no inputs", body: () => JSON.stringify({ inputs: [] }), status: 400, message: /inputs/ },
  {
    name: "wrong shape",
    body: () => jsonBody({ shape: [2, D + 1], data: ones(2 * (D + 1)) }),
    status: 400,
    message: new RegExp(`inputs\\[0\\]\\.shape must be \\[tokens, ${D}\\]`),
  },
  {
    name: "wrong datatype",
    body: () => jsonBody({ datatype: "INT64", shape: [1, D], data: ones(D) }),
    status: 400,
    message: /inputs\[0\]\.datatype must be "FP32", got "INT64"/,
  },
  {
    name: "data length does not match shape",
    body: () => jsonBody({ shape: [2, D], data: ones(D) }),
    status: 400,
    message: /inputs\[0\]\.data has 32 values, expected 64/,
  },
  {
    name: "infinite value",
    body: () =>
      jsonBody({ shape: [1, D], data: [1e400, ...ones(D - 1)] }).replace("Infinity", "1e400"),
    status: 400,
    message: /inputs\[0\]\.data\[0\] must be a finite number/,
  },
  {
    name: "non-numeric value",
    body: () => jsonBody({ shape: [1, D], data: ["NaN", ...ones(D - 1)] }),
    status: 400,
    message: /inputs\[0\]\.data/,
  },
  {
    name: "empty tensor",
    body: () => jsonBody({ shape: [0, D], data: [] }),
    status: 400,
    message: /inputs\[0\]\.shape\[0\] \(tokens\) must be at least 1/,
  },
  {
    name: "too many tokens",
    body: () => jsonBody({ shape: [65, D], data: ones(65 * D) }),
    status: 400,
    message: /inputs\[0\]\.shape\[0\] \(tokens\) must be at most 64/,
  },
  {
    name: "binary size does not match shape",
    body: () =>
      joinBinaryBody(
        {
          inputs: [{
            name: "input",
            datatype: "FP32",
            shape: [2, D],
            parameters: { binary_data_size: 4 * D },
          }],
        },
        [new Uint8Array(4 * D)],
      ).body,
    headers: { "inference-header-content-length": "HL" },
    status: 400,
    message: /binary_data_size must be 256/,
  },
  {
    name: "NaN in binary data",
    body: () => {
      const data = new Float32Array(D);
      data[3] = NaN;
      return joinBinaryBody(
        {
          inputs: [{
            name: "input",
            datatype: "FP32",
            shape: [1, D],
            parameters: { binary_data_size: 4 * D },
          }],
        },
        [new Uint8Array(data.buffer)],
      ).body;
    },
    headers: { "inference-header-content-length": "HL" },
    status: 400,
    message: /binary data\[3\] must be finite/,
  },
  {
    name: "header length beyond the body",
    body: () => jsonBody({ shape: [1, D], data: ones(D) }),
    headers: { "inference-header-content-length": "999999" },
    status: 400,
    message: /Inference-Header-Content-Length/,
  },
  {
    name: "non-integer header length",
    body: () => jsonBody({ shape: [1, D], data: ones(D) }),
    headers: { "inference-header-content-length": "ten" },
    status: 400,
    message: /Inference-Header-Content-Length must be a non-negative integer, got "ten"/i,
  },
  {
    name: "unknown output",
    body: () => jsonBody({ shape: [1, D], data: ones(D) }, { outputs: [{ name: "logits" }] }),
    status: 400,
    message: /outputs\[0\]\.name must be one of/,
  },
  {
    name: "bad request type",
    body: () => jsonBody({ shape: [1, D], data: ones(D) }, { parameters: { request_type: "a b" } }),
    status: 400,
    message: /parameters\.request_type must match/,
  },
  {
    name: "oversized body",
    body: () => "x".repeat(300_000),
    status: 413,
    message: /limits\.max_body_bytes/,
  },
];

Deno.test("bad input gets a precise 4xx and the pool keeps serving", async (t) => {
  const modelDir = await makeTinyModel();
  const pool = await startPool({
    modelDir,
    backends: 1,
    env: { SWITCHYARD_LIMITS__MAX_TOKENS: "64", SWITCHYARD_LIMITS__MAX_BODY_BYTES: "200000" },
  });
  const url = `${pool.router.url}/v2/models/${TINY.name}/infer`;
  try {
    for (const c of cases) {
      await t.step(c.name, async () => {
        let body = c.body();
        const headers: Record<string, string> = { "content-type": "application/json" };
        for (const [name, value] of Object.entries(c.headers ?? {})) {
          headers[name] = value === "HL" ? String(headerLengthOf(body)) : value;
        }
        if (typeof body !== "string") body = body.slice();
        const call = await postRaw(url, body, headers);
        assert.equal(call.status, c.status, JSON.stringify(call.error));
        assert.match(call.error!.error, c.message);
        assert.match(call.error!.error, /^Cannot /);
      });
    }

    await t.step("unknown model is a 404 naming the model", async () => {
      const call = await infer(pool.router.url, "nope", new Float32Array(D), D);
      assert.equal(call.status, 404);
      assert.match(call.error!.error, /"nope"/);
    });

    await t.step("a good request still succeeds afterwards", async () => {
      const call = await infer(pool.router.url, TINY.name, new Float32Array(3 * D).fill(0.5), D);
      assert.equal(call.status, 200);
    });
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});

/** Length of the JSON header at the start of a binary body (up to the first payload byte). */
function headerLengthOf(body: Uint8Array | string): number {
  if (typeof body === "string") return body.length;
  // The JSON header ends at the matching closing brace of the top-level object.
  let depth = 0;
  for (let i = 0; i < body.length; i++) {
    if (body[i] === 0x7b) depth++;
    if (body[i] === 0x7d && --depth === 0) return i + 1;
  }
  return body.length;
}
