/**
 * @module Byte chunks joined into one new buffer (what request/answer readers and the log
 * writer collect chunk by chunk).
 */

/** `chunks` copied into one new buffer; `total` is their summed length when the caller has it. */
export function concatBytes(
  chunks: readonly Uint8Array[],
  total = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0),
): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
