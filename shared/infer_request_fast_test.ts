import assert from "node:assert/strict";
import fc from "fast-check";
import { fastInferRequest } from "./infer_request_fast.ts";
import { InferRequestSchema } from "./oip.ts";

/** Any JSON value, small. */
const anyJson = fc.jsonValue({ maxDepth: 2 });
/** A field that is usually valid and sometimes anything else (or absent). */
const mostly = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 15, arbitrary: valid }, { weight: 1, arbitrary: anyJson });
const name = fc.oneof(fc.constantFrom("input", "output", "expert_ids"), fc.string());
const parameters = fc.dictionary(
  fc.oneof(fc.constantFrom("binary_data_size", "request_type", "__proto__"), fc.string()),
  anyJson,
  { maxKeys: 3 },
);
const shape = fc.array(
  fc.oneof(
    { weight: 15, arbitrary: fc.nat({ max: 300 }) },
    { weight: 1, arbitrary: fc.constantFrom(-1, 1.5, 2 ** 53, 2 ** 53 - 1, -0, "2") },
  ),
  { maxLength: 3 },
);
const input = fc.record({
  name: mostly(name),
  shape: mostly(shape),
  datatype: mostly(fc.constantFrom("FP32", "INT32", "")),
  parameters: mostly(parameters),
  data: mostly(fc.array(anyJson, { maxLength: 3 })),
  extra: anyJson,
}, { requiredKeys: ["name", "shape", "datatype"] });
const output = fc.record({ name: mostly(name), parameters: mostly(parameters), extra: anyJson }, {
  requiredKeys: ["name"],
});
const header = fc.record({
  id: mostly(fc.string({ maxLength: 300 })),
  parameters: mostly(parameters),
  inputs: mostly(fc.array(mostly(input), { maxLength: 3 })),
  outputs: mostly(fc.array(mostly(output), { maxLength: 3 })),
  extra: anyJson,
}, { requiredKeys: ["inputs"] });

/** What JSON.parse makes of `value` (so a `__proto__` key is an own key, as on the wire). */
const wire = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

Deno.test("fastInferRequest accepts only what the schema accepts, and returns what it returns", () => {
  let taken = 0;
  fc.assert(
    fc.property(header, (value) => {
      const raw = wire(value);
      const fast = fastInferRequest(raw);
      if (fast === undefined) return;
      taken++;
      const parsed = InferRequestSchema.safeParse(raw);
      assert.ok(parsed.success, `fast path took what the schema rejects: ${JSON.stringify(raw)}`);
      assert.deepEqual(fast, parsed.data);
      assert.deepEqual(JSON.stringify(fast), JSON.stringify(parsed.data)); // key order too
    }),
    { numRuns: 3000 },
  );
  assert.ok(taken > 100, `fast path taken in only ${taken} of 3000 cases`);
});

Deno.test("fastInferRequest takes the usual binary request and leaves odd ones to the schema", () => {
  const usual = {
    id: "r1",
    inputs: [{
      name: "input",
      shape: [3, 256],
      datatype: "FP32",
      parameters: { binary_data_size: 3072 },
    }],
    outputs: [{ name: "output", parameters: { binary_data: true } }],
  };
  assert.deepEqual(fastInferRequest(wire(usual)), InferRequestSchema.parse(wire(usual)));
  for (
    const odd of [
      '{"inputs":[]}',
      '{"inputs":[{"name":"input","shape":[1],"datatype":"FP32"}],"parameters":{"__proto__":{}}}',
      '{"inputs":[{"name":"","shape":[1],"datatype":"FP32"}]}',
      '{"inputs":[{"name":"input","shape":[-1],"datatype":"FP32"}]}',
      '{"inputs":[{"name":"input","shape":[1],"datatype":"FP32","data":{}}]}',
      '{"id":null,"inputs":[{"name":"input","shape":[1],"datatype":"FP32"}]}',
      "[]",
      "null",
    ]
  ) {
    assert.equal(fastInferRequest(JSON.parse(odd)), undefined, odd);
  }
});
