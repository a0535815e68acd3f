/**
 * Property tests of the binary tensor decoder against an independent reference: a
 * hand-written little-endian DataView decoder, element by element, at every byte
 * alignment (the payload follows a JSON header of any length).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { firstNonFinite, readFloat32, readInt32, tensorBytes } from "./binary_tensor.ts";
import { decodeInferRequest, encodeInferRequest } from "./infer_request_codec.ts";
import { ApiError } from "./errors.ts";

/** The reference: one DataView read per element, explicitly little-endian. */
function referenceFloat32(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: number[] = [];
  for (let at = 0; at + 4 <= bytes.byteLength; at += 4) out.push(view.getFloat32(at, true));
  return out;
}

function referenceInt32(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: number[] = [];
  for (let at = 0; at + 4 <= bytes.byteLength; at += 4) out.push(view.getInt32(at, true));
  return out;
}

/** `words` random 32-bit patterns (any float, NaN and ±Infinity included) at `shift`. */
const placedBytes = fc.record({
  words: fc.array(fc.integer({ min: 0, max: 0xffff_ffff }), { maxLength: 64 }),
  shift: fc.integer({ min: 0, max: 7 }),
}).map(({ words, shift }) => {
  const backing = new Uint8Array(shift + words.length * 4 + 3);
  const view = new DataView(backing.buffer);
  words.forEach((word, i) => view.setUint32(shift + i * 4, word, true));
  backing[0] = 0xaa; // bytes outside the tensor must not leak in
  return backing.subarray(shift, shift + words.length * 4);
});

Deno.test("readFloat32() and readInt32() equal a DataView decoder at every alignment", () => {
  fc.assert(
    fc.property(placedBytes, (bytes) => {
      const floats = readFloat32(bytes);
      const expected = referenceFloat32(bytes);
      assert.equal(floats.length, expected.length);
      for (let i = 0; i < expected.length; i++) assert.ok(Object.is(floats[i], expected[i]));
      assert.deepEqual([...readInt32(bytes)], referenceInt32(bytes));
    }),
    { numRuns: 500 },
  );
});

Deno.test("firstNonFinite() finds the first NaN or ±Infinity like Number.isFinite", () => {
  fc.assert(
    fc.property(placedBytes, (bytes) => {
      const expected = referenceFloat32(bytes).findIndex((v) => !Number.isFinite(v));
      assert.equal(firstNonFinite(readFloat32(bytes)), expected);
    }),
    { numRuns: 500 },
  );
});

Deno.test("readFloat32() is a view when aligned and a private copy when not", () => {
  const backing = new Uint8Array(4 + 8);
  backing.set(tensorBytes(Float32Array.of(1.5, -2)), 4);
  const aligned = readFloat32(backing.subarray(4));
  assert.equal(aligned.buffer, backing.buffer);
  const shifted = new Uint8Array(1 + 8);
  shifted.set(backing.subarray(4), 1);
  const copied = readFloat32(shifted.subarray(1));
  assert.notEqual(copied.buffer, shifted.buffer);
  assert.deepEqual([...copied], [1.5, -2]);
  assert.throws(() => readFloat32(new Uint8Array(6)), RangeError);
});

Deno.test("decodeInferRequest() decodes binary input like the reference, whatever the header length", () => {
  const dModel = 4;
  fc.assert(
    fc.property(
      fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }), { minLength: 4, maxLength: 32 }),
      fc.string({ maxLength: 9 }),
      fc.option(fc.nat({ max: 31 }), { nil: undefined }),
      (values, id, poison) => {
        const rows = Math.floor(values.length / dModel);
        const tokens = Float32Array.from(values.slice(0, rows * dModel));
        if (poison !== undefined) tokens[poison % tokens.length] = Infinity;
        const { body, headerLength } = encodeInferRequest(tokens, dModel, {
          id,
          binaryInput: true,
        });
        const expected = referenceFloat32(body.subarray(headerLength!));
        const bad = expected.findIndex((v) => !Number.isFinite(v));
        const decode = () =>
          decodeInferRequest(body, { model: { name: "m", dModel }, headerLength, maxTokens: 64 });
        if (bad >= 0) {
          assert.throws(decode, (error: unknown) => {
            assert.ok(error instanceof ApiError);
            assert.match(error.message, new RegExp(`binary data\\[${bad}\\] must be finite`));
            return true;
          });
          return;
        }
        const decoded = decode();
        assert.equal(decoded.rows, rows);
        assert.deepEqual([...decoded.tokens], expected);
      },
    ),
    { numRuns: 300 },
  );
});
