/**
 * @module Error codes and the JSON error body every Switchyard endpoint answers with.
 *
 * OIP v2 specifies `{ "error": "<message>" }`; Switchyard adds a machine-readable `code`.
 */
import { z } from "zod";

/** Machine-readable error codes, each mapped to one HTTP status. */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  /** Well-formed, but not something the system can do (an event beyond the pool's maximum). */
  unprocessable: 422,
  unsupported_media_type: 415,
  /** The client went away mid-request (nginx's 499): nobody reads it, logs and metrics do. */
  client_closed_request: 499,
  overloaded: 503,
  too_many_requests: 429,
  no_healthy_backend: 503,
  backend_error: 502,
  timeout: 504,
  internal: 500,
} as const;

/** One of the error codes above. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** JSON error body: OIP's `error` message plus a `code`. */
export const ErrorBodySchema = z.object({
  error: z.string(),
  code: z.string(),
});

/** The JSON error body type. */
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/**
 * An error a handler raises to answer with a given code; `retryAfterS` adds `Retry-After`,
 * `closeConnection` closes the connection after the answer (see {@linkcode errorResponse}).
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly retryAfterS: number | undefined;
  readonly closeConnection: boolean;

  constructor(
    code: ErrorCode,
    message: string,
    options: { retryAfterS?: number; closeConnection?: boolean } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.retryAfterS = options.retryAfterS;
    this.closeConnection = options.closeConnection ?? false;
  }

  /** HTTP status of this error. */
  get status(): number {
    return ERROR_STATUS[this.code];
  }

  /** The JSON body to send. */
  toBody(): ErrorBody {
    return { error: this.message, code: this.code };
  }
}

/**
 * Builds the `Response` for an error (JSON body, status, optional `Retry-After`); with
 * `closeConnection`, `Connection: close`, which the servers' `closeWhenAsked` enforces.
 */
export function errorResponse(error: ApiError): Response {
  const headers = new Headers({ "content-type": "application/json" });
  if (error.retryAfterS !== undefined) headers.set("retry-after", String(error.retryAfterS));
  if (error.closeConnection) headers.set("connection", "close");
  return new Response(JSON.stringify(error.toBody()), { status: error.status, headers });
}
