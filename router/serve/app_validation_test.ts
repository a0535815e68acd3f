/**
 * Every malformed inference request is answered 400 with a message naming the
 * offending field: structural mistakes by the router itself (never reaching a backend),
 * bad tensor values by the backend (the router does no per-element work), whose 400
 * passes through unchanged.
 */
import assert from "node:assert/strict";
import { joinBinaryBody, tensorBytes } from "../../shared/binary_tensor.ts";
import { createHarness } from "../../tests/_support/router/harness.ts";
import {
  jsonRequest,
  postInfer,
  type TestRequest,
  tinyRequest,
} from "../../tests/_support/router/requests.ts";

function input(overrides: Record<string, unknown>): Record<string, unknown> {
  return {
    inputs: [{ name: "input", shape: [1, 4], datatype: "FP32", data: [1, 2, 3, 4], ...overrides }],
  };
}

function binaryRequest(
  declaredSize: number,
  payloadFloats: number,
  values: (data: Float32Array) => void = () => {},
): TestRequest {
  const header = input({ data: undefined, parameters: { binary_data_size: declaredSize } });
  const data = new Float32Array(payloadFloats);
  values(data);
  const payload = tensorBytes(data);
  const { body, headerLength } = joinBinaryBody(header, [payload]);
  return {
    body: body as Uint8Array<ArrayBuffer>,
    headers: {
      "content-type": "application/octet-stream",
      "inference-header-content-length": String(headerLength),
    },
  };
}

type Case = {
  name: string;
  request: () => TestRequest;
  headers?: Record<string, string>;
  message: RegExp;
};

/** Structure: the router answers; no backend sees the request. */
const cases: Case[] = [
  {
    name: "a wrong shape",
    request: () => jsonRequest(input({ shape: [1, 3], data: [1, 2, 3] })),
    message: /inputs\[0\]\.shape must be \[tokens, 4\], got \[1, 3\]/,
  },
  {
    name: "a wrong datatype",
    request: () => jsonRequest(input({ datatype: "INT32" })),
    message: /inputs\[0\]\.datatype must be "FP32", got "INT32"/,
  },
  {
    name: "an empty tensor shape [0, 4]",
    request: () => jsonRequest(input({ shape: [0, 4], data: [] })),
    message: /inputs\[0\]\.shape\[0\] \(tokens\) must be at least 1/,
  },
  {
    name: "too many tokens",
    request: () => tinyRequest(9),
    message: /inputs\[0\]\.shape\[0\] \(tokens\) must be at most 8, got 9/,
  },
  {
    name: "malformed JSON",
    request: () => jsonRequest('{"inputs": [ oops'),
    message: /body is not valid JSON/,
  },
  {
    name: "a binary_data_size that does not match the shape",
    request: () => binaryRequest(12, 3),
    message: /inputs\[0\]\.parameters\.binary_data_size must be 16/,
  },
  {
    name: "a binary payload shorter than binary_data_size",
    request: () => binaryRequest(16, 3),
    message: /binary payload has 12 bytes, inputs\[0\]\.parameters\.binary_data_size says 16/,
  },
  {
    name: "a non-integer inference-header-content-length",
    request: () => tinyRequest(1, { binaryInput: true }),
    headers: { "inference-header-content-length": "12abc" },
    message: /header inference-header-content-length must be a non-negative integer, got "12abc"/,
  },
  {
    name: "an inference-header-content-length past the body",
    request: () => tinyRequest(1, { binaryInput: true }),
    headers: { "inference-header-content-length": "100000" },
    message: /Inference-Header-Content-Length must be an integer in \[0, \d+\], got "100000"/,
  },
  {
    name: "a bad x-request-type header",
    request: () => tinyRequest(1),
    headers: { "x-request-type": "not a label!" },
    message: /parameters\.request_type must match/,
  },
  {
    name: "a missing inputs field",
    request: () => jsonRequest({ id: "x" }),
    message: /inputs: /,
  },
  {
    name: "a wrong input name",
    request: () => jsonRequest(input({ name: "hidden" })),
    message: /inputs\[0\]\.name must be "input", got "hidden"/,
  },
];

/** Values (inside `data` or the binary payload): the backend answers, once. */
const valueCases: Case[] = [
  {
    name: "a non-finite value (1e400 in JSON)",
    request: () =>
      jsonRequest(
        '{"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","data":[1e400,0,0,0]}]}',
      ),
    message: /inputs\[0\]\.data\[0\]/,
  },
  {
    name: "a data length that does not match the shape",
    request: () => jsonRequest(input({ shape: [2, 4] })),
    message: /inputs\[0\]\.data has 4 values, expected 8/,
  },
  {
    name: "a NaN in binary data",
    request: () => binaryRequest(16, 4, (data) => data[2] = NaN),
    message: /inputs\[0\] binary data\[2\] must be finite, got NaN/,
  },
];

for (const [kind, list] of [["router", cases], ["backend", valueCases]] as const) {
  for (const { name, request, headers, message } of list) {
    Deno.test(`infer answers 400 (from the ${kind}) naming the field for ${name}`, async () => {
      const h = await createHarness({ config: { limits: { max_tokens: 8 } } });
      const res = await postInfer(h, request(), headers ? { headers } : {});
      const body = await res.json();
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(body.code, "bad_request");
      assert.match(body.error, /^Cannot run inference: /);
      assert.match(body.error, message);
      const reached = h.backends.flatMap((backend) => backend.inferences()).length;
      assert.equal(reached, kind === "router" ? 0 : 1);
      await h.close();
    });
  }
}
