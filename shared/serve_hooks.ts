/**
 * @module What router and backend add around their `Deno.serve` handler:
 *
 * - {@linkcode closeWhenAsked}: a response with `Connection: close` (408 on a slow body,
 *   413 mid-body) really closes its connection. `Deno.serve` otherwise keeps it open to
 *   drain the unread request body, which a slow or hostile client never finishes. The
 *   body is re-streamed and errors with {@linkcode CloseConnection} after the last byte:
 *   the server then aborts the connection; clients get the status, headers and the whole
 *   body, then EOF (the chunked body has no terminating chunk). In-process callers of the
 *   app (`app.request`, the edge entry) never see this wrapper.
 * - {@linkcode serveErrorHandler}: `onError` logging one JSON line for real errors and
 *   nothing for {@linkcode CloseConnection} (instead of the runtime's stack dump).
 */
import { ApiError, errorResponse } from "./errors.ts";
import type { Logger } from "./logger.ts";

/** The deliberate end of a closing response's body stream. */
export class CloseConnection extends Error {
  constructor() {
    super("connection closed after the answer");
    this.name = "CloseConnection";
  }
}

/** `response` with the same status, headers and bytes, ending in {@linkcode CloseConnection}. */
export function closingResponse(response: Response): Response {
  const reader = response.body?.getReader();
  const headers = new Headers(response.headers);
  // The length is not what the connection carries any more: chunked, cut after the body.
  headers.delete("content-length");
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = reader ? await reader.read() : { done: true as const, value: undefined };
      if (chunk.done) controller.error(new CloseConnection());
      else controller.enqueue(chunk.value);
    },
    cancel: (reason) => reader?.cancel(reason),
  }, { highWaterMark: 0 });
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

/** Wraps a serve handler so that answers saying `Connection: close` close it. */
export function closeWhenAsked<Info>(
  handler: (request: Request, info: Info) => Response | Promise<Response>,
): (request: Request, info: Info) => Promise<Response> {
  return async (request, info) => {
    const response = await handler(request, info);
    if (response.status === 101 || response.headers.get("connection") !== "close") return response;
    return closingResponse(response);
  };
}

/** The `onError` option of `Deno.serve`. */
export function serveErrorHandler(logger: Logger): (error: unknown) => Response {
  return (error) => {
    if (!(error instanceof CloseConnection)) {
      logger.error("server error", { error: (error as Error)?.message ?? String(error) });
    }
    return errorResponse(new ApiError("internal", "Cannot handle request: internal error"));
  };
}
