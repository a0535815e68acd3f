/**
 * @module Reading a request body under `limits.max_body_bytes` and `limits.body_timeout`:
 * rejected up front from `content-length`, and again while reading, so a lying or absent
 * header cannot get more bytes into memory than the limit; a body that has not fully
 * arrived within the timeout is answered 408 (`Deno.serve` has no read timeout of its
 * own); a client that disconnects mid-body is counted, not logged as an error.
 *
 * Closing: both rejections ask for the connection to be closed after the answer (see
 * `shared/serve_hooks.ts`). Deno 2.9 honours that when no body read is pending (an oversized
 * body), but keeps the socket of a client that has sent nothing since the last read
 * until that client sends or hangs up: a pending read of the request body cannot be
 * cancelled from JavaScript. The handler, its buffers and timer are released at the
 * timeout either way; the socket itself is for a proxy's client-body timeout to close.
 */
import { concatBytes } from "./concat_bytes.ts";
import { ApiError } from "./errors.ts";
import type { InputFaults } from "./input_faults.ts";
import { requestTimers } from "./timer_queue.ts";

/** Default of `limits.body_timeout`: the whole body must arrive within it. */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

/** Options of {@linkcode readLimitedBody}. */
export interface ReadBodyOptions {
  /** The whole body must arrive within this many ms of the handler starting to read it. */
  timeoutMs?: number;
  /** Where disconnects and timeouts are counted. */
  faults?: InputFaults;
  /**
   * Aborted when the read must end early (the router gave its reader slot to a newer
   * request): answered 408 and closed like a timeout, with the abort reason as message.
   */
  signal?: AbortSignal;
}

function tooLarge(detail: string, maxBytes: number, closeConnection = false): ApiError {
  return new ApiError(
    "payload_too_large",
    `Cannot read request body: ${detail} exceeds limits.max_body_bytes (${maxBytes} bytes)`,
    // Mid-body: close rather than let the server drain the rest of an oversized body.
    { closeConnection },
  );
}

/** Throws 413 when `content-length` announces more than `maxBytes`. */
export function checkContentLength(headers: Headers, maxBytes: number): void {
  const declared = headers.get("content-length");
  if (declared === null || !/^\d+$/.test(declared.trim())) return;
  if (Number(declared) > maxBytes) throw tooLarge(`content-length ${declared.trim()}`, maxBytes);
}

/**
 * Reads the whole body: 413 as soon as it passes `maxBytes`, 408 (connection closed after
 * the answer) when it has not arrived within the timeout, 499 when the client went away.
 */
export async function readLimitedBody(
  request: Request,
  maxBytes: number,
  options: ReadBodyOptions = {},
): Promise<Uint8Array<ArrayBuffer>> {
  checkContentLength(request.headers, maxBytes);
  if (request.body === null) return new Uint8Array(0);
  const timeoutMs = options.timeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const reader = request.body.getReader();
  let timedOut = false;
  // Cancelling ends the pending read at once; the flag tells it from a real end.
  const stop = () => {
    timedOut = true;
    reader.cancel().catch(() => {});
  };
  // On the shared queue: a runtime timer per request body costs more than the read.
  const timer = requestTimers.setTimeout(stop, timeoutMs);
  const signal = options.signal;
  if (signal?.aborted) stop();
  signal?.addEventListener("abort", stop, { once: true });
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let total = 0;
  try {
    for (;;) {
      let result: ReadableStreamReadResult<Uint8Array<ArrayBuffer>>;
      try {
        result = await reader.read();
      } catch {
        if (timedOut) break;
        options.faults?.record("client_disconnected");
        throw new ApiError(
          "client_closed_request",
          "Cannot read request body: the client closed the connection mid-body",
        );
      }
      if (timedOut || result.done) break;
      const value = result.value;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge("body", maxBytes, true);
      }
      chunks.push(value);
    }
  } finally {
    requestTimers.clearTimeout(timer);
    signal?.removeEventListener("abort", stop);
  }
  if (timedOut && signal?.aborted) {
    options.faults?.record("body_evicted");
    throw new ApiError("request_timeout", String(signal.reason), { closeConnection: true });
  }
  if (timedOut) {
    options.faults?.record("body_timeout");
    throw new ApiError(
      "request_timeout",
      `Cannot read request body: it did not arrive within limits.body_timeout (${timeoutMs} ms)`,
      { closeConnection: true },
    );
  }
  if (chunks.length === 1) return chunks[0]!;
  return concatBytes(chunks, total);
}
