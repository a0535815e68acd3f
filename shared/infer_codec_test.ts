import assert from "node:assert/strict";
import { ApiError } from "./errors.ts";
import {
  joinBinaryBody,
  readFloat32,
  readInt32,
  splitBinaryBody,
  tensorBytes,
} from "./binary_tensor.ts";
import { decodeInferRequest, encodeInferRequest } from "./infer_request_codec.ts";
import { decodeInferResponse, encodeInferResponse } from "./infer_response_codec.ts";

const model = { name: "m", dModel: 3 };
const tokens = Float32Array.of(0.5, -1.25, 3, 1e-7, 2, -0.75);

Deno.test("binary tensors round-trip little-endian FP32 and INT32", () => {
  assert.deepEqual([...readFloat32(tensorBytes(tokens))], [...tokens]);
  const ints = Int32Array.of(-1, 0, 7, 2 ** 31 - 1);
  assert.deepEqual([...readInt32(tensorBytes(ints))], [...ints]);
  const bytes = tensorBytes(Float32Array.of(1));
  assert.deepEqual([...bytes], [0, 0, 0x80, 0x3f]);
});

Deno.test("joinBinaryBody() and splitBinaryBody() agree on the header length", () => {
  const { body, headerLength } = joinBinaryBody({ a: 1 }, [Uint8Array.of(1, 2), Uint8Array.of(3)]);
  const { json, payload } = splitBinaryBody(body, headerLength);
  assert.deepEqual(JSON.parse(json), { a: 1 });
  assert.deepEqual([...payload], [1, 2, 3]);
  assert.throws(() => splitBinaryBody(body, body.byteLength + 1), RangeError);
});

Deno.test("encodeInferRequest() → decodeInferRequest() round-trips JSON and binary", () => {
  for (const binaryInput of [false, true]) {
    const { body, headerLength } = encodeInferRequest(tokens, 3, {
      id: "r1",
      requestType: "code",
      binaryInput,
      outputs: ["output", "expert_ids"],
      binaryOutputs: true,
    });
    assert.equal(headerLength === null, !binaryInput);
    const decoded = decodeInferRequest(body, { model, headerLength, maxTokens: 8 });
    assert.equal(decoded.rows, 2);
    assert.equal(decoded.id, "r1");
    assert.equal(decoded.requestType, "code");
    assert.deepEqual([...decoded.tokens], [...tokens]);
    assert.deepEqual(decoded.outputs, [
      { name: "output", binary: true },
      { name: "expert_ids", binary: true },
    ]);
  }
});

Deno.test("decodeInferRequest() accepts nested JSON data and the request-type header", () => {
  const body = new TextEncoder().encode(JSON.stringify({
    inputs: [{ name: "input", shape: [2, 3], datatype: "FP32", data: [[1, 2, 3], [4, 5, 6]] }],
  }));
  const decoded = decodeInferRequest(body, {
    model,
    headerLength: null,
    maxTokens: 8,
    requestTypeHeader: "math",
  });
  assert.deepEqual([...decoded.tokens], [1, 2, 3, 4, 5, 6]);
  assert.equal(decoded.requestType, "math");
  assert.deepEqual(decoded.outputs, [{ name: "output", binary: false }]);
});

Deno.test("decodeInferRequest() rejects bad input with a 400 naming the field", () => {
  const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
  const input = (extra: Record<string, unknown>) => ({
    inputs: [{ name: "input", shape: [1, 3], datatype: "FP32", data: [1, 2, 3], ...extra }],
  });
  const cases: [Uint8Array, RegExp][] = [
    [json(input({ name: "x" })), /inputs\[0\]\.name must be "input", got "x"/],
    [json(input({ shape: [1, 4] })), /inputs\[0\]\.shape must be \[tokens, 3\], got \[1, 4\]/],
    [json(input({ shape: [1, 3, 1] })), /inputs\[0\]\.shape must be \[tokens, 3\]/],
    [json(input({ datatype: "FP16" })), /inputs\[0\]\.datatype must be "FP32", got "FP16"/],
    [
      json(input({ data: [1, 2, null] })),
      /inputs\[0\]\.data\[2\] must be a finite number, got null/,
    ],
    [json(input({ data: undefined })), /inputs\[0\]\.data is missing/],
    [json(input({ shape: [9, 3], data: Array(27).fill(0) })), /must be at most 8, got 9/],
    [json({ inputs: "nope" }), /^Cannot run inference: inputs: /],
    [json({ ...input({}), outputs: [{ name: "output" }, { name: "output" }] }), /requested twice/],
    [new TextEncoder().encode("{bad"), /body is not valid JSON/],
  ];
  for (const [body, message] of cases) {
    assert.throws(
      () => decodeInferRequest(body, { model, headerLength: null, maxTokens: 8 }),
      (e) => {
        assert.ok(e instanceof ApiError);
        assert.equal(e.status, 400);
        assert.match(e.message, message);
        return true;
      },
    );
  }
  const infinite = new TextEncoder().encode(
    '{"inputs":[{"name":"input","shape":[1,3],"datatype":"FP32","data":[1e400,0,0]}]}',
  );
  assert.throws(
    () => decodeInferRequest(infinite, { model, headerLength: null, maxTokens: 8 }),
    /data\[0\] must be a finite number, got Infinity/,
  );
});

Deno.test("encodeInferResponse() → decodeInferResponse() round-trips mixed JSON and binary outputs", () => {
  const ids = Int32Array.of(1, 2, 3, 4);
  for (
    const binary of [new Set<string>(), new Set(["output"]), new Set(["output", "expert_ids"])]
  ) {
    const encoded = encodeInferResponse(
      { model_name: "m", id: "r" },
      [
        { name: "output", shape: [2, 3], data: tokens },
        { name: "expert_ids", shape: [1, 2, 2], data: ids },
      ],
      binary,
    );
    const length = encoded.headers["inference-header-content-length"];
    assert.equal(length === undefined, binary.size === 0);
    const decoded = decodeInferResponse(encoded.body, length === undefined ? null : Number(length));
    assert.equal(decoded.head.id, "r");
    assert.deepEqual([...decoded.tensors.get("output")!.data], [...tokens]);
    assert.deepEqual([...decoded.tensors.get("expert_ids")!.data], [...ids]);
    assert.ok(decoded.tensors.get("expert_ids")!.data instanceof Int32Array);
  }
});
