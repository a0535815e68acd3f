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

/** Little-endian bytes of a typed array (a copy, safe to transfer). */
export function tensorBytes(data: Float32Array | Int32Array): Uint8Array {
  const bytes = new Uint8Array(data.byteLength);
  const view = new DataView(bytes.buffer);
  const isFloat = data instanceof Float32Array;
  for (let i = 0; i < data.length; i++) {
    if (isFloat) view.setFloat32(i * 4, data[i]!, true);
    else view.setInt32(i * 4, data[i]!, true);
  }
  return bytes;
}

/** Reads little-endian FP32 values from bytes (length must be a multiple of 4). */
export function readFloat32(bytes: Uint8Array): Float32Array {
  const out = new Float32Array(bytes.byteLength / 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

/** Reads little-endian INT32 values from bytes (length must be a multiple of 4). */
export function readInt32(bytes: Uint8Array): Int32Array {
  const out = new Int32Array(bytes.byteLength / 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt32(i * 4, true);
  return out;
}
