/**
 * @module `Deno.serve`'s `onError` for router and backend: a response stream that ends
 * with {@linkcode CloseConnection} (a deliberate close, e.g. a body read timeout) is not
 * an error and logs nothing; anything else is logged as one JSON line (never the
 * runtime's default stack dump on stderr) and answered 500 when an answer is still possible.
 */
import { ApiError, CloseConnection, errorResponse } from "./errors.ts";
import type { Logger } from "./logger.ts";

/** The `onError` option of `Deno.serve`. */
export function serveErrorHandler(logger: Logger): (error: unknown) => Response {
  return (error) => {
    if (!(error instanceof CloseConnection)) {
      logger.error("server error", { error: (error as Error)?.message ?? String(error) });
    }
    return errorResponse(new ApiError("internal", "Cannot handle request: internal error"));
  };
}
