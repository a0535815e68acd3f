/**
 * @module Reading a request body under `limits.max_body_bytes`: rejected up front from
 * `content-length`, and again while reading, so a lying or absent header cannot get
 * more bytes into memory than the limit.
 */
import { ApiError } from "./errors.ts";

function tooLarge(detail: string, maxBytes: number): ApiError {
  return new ApiError(
    "payload_too_large",
    `Cannot read request body: ${detail} exceeds limits.max_body_bytes (${maxBytes} bytes)`,
  );
}

/** Throws 413 when `content-length` announces more than `maxBytes`. */
export function checkContentLength(headers: Headers, maxBytes: number): void {
  const declared = headers.get("content-length");
  if (declared === null || !/^\d+$/.test(declared.trim())) return;
  if (Number(declared) > maxBytes) throw tooLarge(`content-length ${declared.trim()}`, maxBytes);
}

/** Reads the whole body, throwing 413 as soon as it passes `maxBytes`. */
export async function readLimitedBody(
  request: Request,
  maxBytes: number,
): Promise<Uint8Array<ArrayBuffer>> {
  checkContentLength(request.headers, maxBytes);
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge("body", maxBytes);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
