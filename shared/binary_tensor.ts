/**
 * @module Low-level helpers of the OIP v2 binary tensor data extension: a body is
 * `Inference-Header-Content-Length` bytes of JSON followed by the raw little-endian
 * tensor bytes of each binary tensor, in tensor order.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Splits a body into its JSON header text and binary payload. */
export function splitBinaryBody(
  body: Uint8Array,
  headerLength: number,
): { json: string; payload: Uint8Array } {
  if (!Number.isInteger(headerLength) || headerLength < 0 || headerLength > body.byteLength) {
    throw new RangeError(
      `Inference-Header-Content-Length must be an integer in [0, ${body.byteLength}], got "${headerLength}"`,
    );
  }
  return {
    json: decoder.decode(body.subarray(0, headerLength)),
    payload: body.subarray(headerLength),
  };
}

/** Joins a JSON header and binary chunks into one body; returns the body and header length. */
export function joinBinaryBody(
  header: unknown,
  chunks: Uint8Array[],
): { body: Uint8Array<ArrayBuffer>; headerLength: number } {
  const json = encoder.encode(JSON.stringify(header));
  const total = chunks.reduce((sum, chunk) => sum + chunk.byteLength, json.byteLength);
  const body = new Uint8Array(total);
  body.set(json, 0);
  let offset = json.byteLength;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { body, headerLength: json.byteLength };
}

/** True on little-endian hosts (every platform Deno ships for); the fast paths need it. */
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/**
 * Little-endian bytes of a typed array: a view of `data` itself (no copy) on
 * little-endian hosts; callers that keep or transfer the bytes copy them.
 */
export function tensorBytes(data: Float32Array | Int32Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const bytes = new Uint8Array(data.byteLength);
  const view = new DataView(bytes.buffer);
  const isFloat = data instanceof Float32Array;
  for (let i = 0; i < data.length; i++) {
    if (isFloat) view.setFloat32(i * 4, data[i]!, true);
    else view.setInt32(i * 4, data[i]!, true);
  }
  return bytes;
}

function checkLength(bytes: Uint8Array): void {
  if (bytes.byteLength % 4 !== 0) {
    throw new RangeError(`tensor bytes must be a multiple of 4, got ${bytes.byteLength}`);
  }
}

/**
 * Little-endian 4-byte elements of `bytes` as a typed array: a view over `bytes` when
 * its offset is 4-byte aligned (no copy; it aliases the body), one copy when not.
 */
function readWords<T extends Float32Array | Int32Array>(
  bytes: Uint8Array,
  make: (buffer: ArrayBuffer, offset: number, length: number) => T,
  slow: (view: DataView, out: T) => void,
): T {
  checkLength(bytes);
  const length = bytes.byteLength / 4;
  if (!LITTLE_ENDIAN) {
    const out = make(new ArrayBuffer(bytes.byteLength), 0, length);
    slow(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), out);
    return out;
  }
  if (bytes.byteOffset % 4 === 0) {
    return make(bytes.buffer as ArrayBuffer, bytes.byteOffset, length);
  }
  return make(bytes.slice().buffer, 0, length);
}

/** Reads little-endian FP32 values (length a multiple of 4); see {@linkcode readWords}. */
export function readFloat32(bytes: Uint8Array): Float32Array {
  return readWords(
    bytes,
    (buffer, offset, length) => new Float32Array(buffer, offset, length),
    (view, out) => {
      for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
    },
  );
}

/** Reads little-endian INT32 values (length a multiple of 4); see {@linkcode readWords}. */
export function readInt32(bytes: Uint8Array): Int32Array {
  return readWords(
    bytes,
    (buffer, offset, length) => new Int32Array(buffer, offset, length),
    (view, out) => {
      for (let i = 0; i < out.length; i++) out[i] = view.getInt32(i * 4, true);
    },
  );
}

/** Index of the first NaN or ±Infinity in `values`, or -1: one tight loop, no closures. */
export function firstNonFinite(values: Float32Array): number {
  const n = values.length;
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    // v - v is 0 for every finite v and NaN for NaN and ±Infinity.
    if (v - v !== 0) return i;
  }
  return -1;
}
