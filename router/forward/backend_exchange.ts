/**
 * @module One POST to one backend, classified as an answer (status and headers; the
 * body is left unread so it can stream to the client), an abort (the signal fired
 * before the answer's head arrived: a per-try timeout, the request's deadline, an
 * ejection — its `reason` says which) or a connection failure (anything else).
 */
import type { FetchLike } from "../runtime/fetch_like.ts";

/** How one exchange ended. */
export type ExchangeResult =
  | { kind: "answer"; status: number; headers: Headers; body: ReadableStream<Uint8Array> | null }
  | { kind: "aborted"; reason: unknown }
  | { kind: "unreachable"; reason: string };

/** One request to send. */
export interface ExchangeRequest {
  url: string;
  headers: Headers;
  body: Uint8Array<ArrayBuffer>;
  /** Aborted when the attempt must stop waiting (timeouts, an ejection). */
  signal: AbortSignal;
}

/** Posts `body` and returns once the answer's head arrived; never throws. */
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
    return {
      kind: "answer",
      status: response.status,
      headers: response.headers,
      body: response.body,
    };
  } catch (error) {
    if (request.signal.aborted) return { kind: "aborted", reason: request.signal.reason };
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { kind: "unreachable", reason };
  }
}
