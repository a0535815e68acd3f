/**
 * @module One POST to one backend, classified as an answer, an abort (the signal fired
 * before the answer was in hand: a per-try timeout, the request's deadline, an
 * ejection — its `reason` says which) or a connection failure (anything else).
 *
 * An answer that declares a `content-length` of at most `bufferLimit` bytes is read
 * whole before it counts as an answer, so a backend that dies between its head and its
 * body (`kill -9`: the peer's reset discards what the router had not read yet) is a
 * connection failure the caller can retry, not a broken 200 for the client. A larger
 * or unsized answer is left unread and streams through.
 */
import type { FetchLike } from "../../runtime/fetch_like.ts";

/** An answer's body: read whole (small answers), a stream (large ones) or none. */
export type AnswerBody = Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null;

/** How one exchange ended. */
export type ExchangeResult =
  | { kind: "answer"; status: number; headers: Headers; body: AnswerBody }
  | { kind: "aborted"; reason: unknown }
  | { kind: "unreachable"; reason: string };

/** One request to send. */
export interface ExchangeRequest {
  url: string;
  headers: HeadersInit;
  body: Uint8Array<ArrayBuffer>;
  /** Aborted when the attempt must stop waiting (timeouts, an ejection). */
  signal: AbortSignal;
  /** Answers declaring at most this many bytes are read whole inside the attempt. */
  bufferLimit: number;
}

/** Posts `body` and returns once the answer (small) or its head (large) arrived; never throws. */
export async function exchange(
  fetch: FetchLike,
  request: ExchangeRequest,
): Promise<ExchangeResult> {
  try {
    const response = await fetch(request.url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      signal: request.signal,
    });
    const declared = Number(response.headers.get("content-length") ?? NaN);
    const small = response.body !== null && declared <= request.bufferLimit;
    return {
      kind: "answer",
      status: response.status,
      headers: response.headers,
      body: small ? new Uint8Array(await response.arrayBuffer()) : response.body,
    };
  } catch (error) {
    if (request.signal.aborted) return { kind: "aborted", reason: request.signal.reason };
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { kind: "unreachable", reason };
  }
}

/** Releases an answer's body that will not be passed on. */
export function discard(body: AnswerBody): void {
  if (body instanceof ReadableStream) void body.cancel().catch(() => {});
}
