import assert from "node:assert/strict";
import fc from "fast-check";
import { flattenFp32, FP32_MAX, TensorValueError } from "./tensor_values.ts";
import { ApiError } from "./errors.ts";
import { decodeInferRequest } from "./infer_request_codec.ts";

/** Splits `flat` into nested arrays by a random sequence of chunk sizes (any nesting). */
function nest(flat: number[], sizes: number[]): unknown[] {
  let level: unknown[] = flat;
  for (const size of sizes) {
    const next: unknown[] = [];
    for (let i = 0; i < level.length; i += size) next.push(level.slice(i, i + size));
    level = next;
  }
  return level;
}

const fp32 = fc.float({ noNaN: true, noDefaultInfinity: true }).map(Math.fround);

Deno.test("flattenFp32() reads any nesting of in-range values in row-major order", () => {
  fc.assert(
    fc.property(
      fc.array(fp32, { minLength: 1, maxLength: 64 }),
      fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 6 }),
      (flat, sizes) => {
        const out = flattenFp32(nest(flat, sizes), "data", flat.length);
        assert.deepEqual([...out], flat.map((v) => Object.is(v, -0) ? -0 : v));
      },
    ),
  );
});

Deno.test("flattenFp32() refuses finite values beyond FP32's range, naming the index", () => {
  fc.assert(
    fc.property(
      fc.double({ min: FP32_MAX, noNaN: true, noDefaultInfinity: true }).filter((v) =>
        v > FP32_MAX
      ),
      fc.boolean(),
      fc.integer({ min: 0, max: 7 }),
      (magnitude, negative, at) => {
        const flat = Array.from({ length: 8 }, () => 1);
        flat[at] = negative ? -magnitude : magnitude;
        assert.throws(
          () => flattenFp32([flat.slice(0, 4), flat.slice(4)], "inputs[0].data", 8),
          (e: unknown) =>
            e instanceof TensorValueError && e.message.startsWith(`inputs[0].data[${at}] is `) &&
            e.message.includes("beyond FP32's range"),
        );
      },
    ),
  );
  // FLT_MAX itself (as written) is fine.
  assert.equal(flattenFp32([FP32_MAX, -FP32_MAX], "d", 2)[0], Math.fround(FP32_MAX));
});

Deno.test("flattenFp32() stops at the first extra value and names wrong types and counts", () => {
  assert.throws(() => flattenFp32([1, 2, 3], "d", 2), /d has more than 2 values/);
  assert.throws(() => flattenFp32([[1], []], "d", 2), /d has 1 values, expected 2/);
  assert.throws(() => flattenFp32([1, "2"], "d", 2), /d\[1\] must be a finite number, got "2"/);
  assert.throws(() => flattenFp32([1, null], "d", 2), /d\[1\] must be a finite number, got null/);
  assert.throws(() => flattenFp32([1, {}], "d", 2), /d\[1\] must be a finite number, got \{\}/);
});

Deno.test("flattenFp32() is iterative: a deep array costs no stack", () => {
  let deep: unknown[] = [1];
  for (let i = 0; i < 200_000; i++) deep = [deep];
  assert.deepEqual([...flattenFp32(deep, "d", 1)], [1]);
});

Deno.test("decodeInferRequest() answers 1e39 with a 400 naming the field", () => {
  const body = new TextEncoder().encode(
    '{"inputs":[{"name":"input","shape":[1,2],"datatype":"FP32","data":[0.5,1e39]}]}',
  );
  assert.throws(
    () =>
      decodeInferRequest(body, {
        model: { name: "m", dModel: 2 },
        headerLength: null,
        maxTokens: 4,
      }),
    (e: unknown) =>
      e instanceof ApiError && e.status === 400 &&
      /inputs\[0\]\.data\[1\] is 1e\+39, beyond FP32's range/.test(e.message),
  );
});
