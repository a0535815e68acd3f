/**
 * @module The binary extension's `Inference-Header-Content-Length` request header.
 */
import { ApiError } from "./errors.ts";
import { HEADER_LENGTH_HEADER } from "./oip.ts";

/** The header's value as a byte count, or null when absent; 400 when not an integer. */
export function parseHeaderLength(headers: Headers): number | null {
  const raw = headers.get(HEADER_LENGTH_HEADER);
  if (raw === null) return null;
  const text = raw.trim();
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) {
    throw new ApiError(
      "bad_request",
      `Cannot run inference: header ${HEADER_LENGTH_HEADER} must be a non-negative integer, got ${
        JSON.stringify(raw)
      }`,
    );
  }
  return value;
}
