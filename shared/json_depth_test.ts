import assert from "node:assert/strict";
import fc from "fast-check";
import { jsonDepthExceeded, MAX_JSON_DEPTH } from "./json_depth.ts";
import { ApiError } from "./errors.ts";
import { decodeInferRequest } from "./infer_request_codec.ts";

const encoder = new TextEncoder();

/** Reference depth of a parsed value (test-only; inputs here are shallow). */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value !== null && typeof value === "object") {
    return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  }
  return 0;
}

Deno.test("jsonDepthExceeded() agrees with the parsed value's depth for any JSON", () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (value, limit) => {
      const bytes = encoder.encode(JSON.stringify(value));
      assert.equal(jsonDepthExceeded(bytes, limit) === -1, depthOf(value) <= limit);
    }),
  );
});

Deno.test("jsonDepthExceeded() ignores brackets inside strings, escaped quotes included", () => {
  fc.assert(
    fc.property(
      fc.string({ unit: fc.constantFrom("[", "{", "]", "}", '"', "\\", "a", "é") }),
      (s) => {
        const bytes = encoder.encode(JSON.stringify({ s: [s] }));
        assert.equal(jsonDepthExceeded(bytes, 2), -1);
        assert.equal(jsonDepthExceeded(bytes, 1), bytes.indexOf(0x5b));
      },
    ),
  );
});

Deno.test("a body nested a million deep is refused at the limit, with a 400 naming it", () => {
  const depth = 1_000_000;
  const body = encoder.encode(
    `{"inputs":[{"name":"input","shape":[1,2],"datatype":"FP32","data":${"[".repeat(depth)}1${
      "]".repeat(depth)
    }}]}`,
  );
  assert.ok(jsonDepthExceeded(body, MAX_JSON_DEPTH) > 0);
  assert.throws(
    () =>
      decodeInferRequest(body, {
        model: { name: "m", dModel: 2 },
        headerLength: null,
        maxTokens: 4,
      }),
    (e: unknown) =>
      e instanceof ApiError && e.status === 400 &&
      e.message.includes(`deeper than ${MAX_JSON_DEPTH} levels (the limit)`),
  );
});

Deno.test("the binary header is scanned, not the payload after it", () => {
  const header = encoder.encode(
    JSON.stringify({
      inputs: [{
        name: "input",
        shape: [1, 2],
        datatype: "FP32",
        parameters: { binary_data_size: 8 },
      }],
    }),
  );
  // Payload bytes that look like '[' must not count.
  const body = new Uint8Array(header.byteLength + 8);
  body.set(header);
  body.fill(0x5b, header.byteLength);
  const decoded = decodeInferRequest(body, {
    model: { name: "m", dModel: 2 },
    headerLength: header.byteLength,
    maxTokens: 4,
  });
  assert.equal(decoded.rows, 1);
});
