/**
 * @module Request ids: the client's `x-request-id` when it is sane, else a fresh UUID.
 */

/** Header carrying the request id, both ways. */
export const REQUEST_ID_HEADER = "x-request-id";

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The id to use for a request: `incoming` when it is 1–128 safe characters, else a UUID. */
export function requestIdFrom(incoming: string | null | undefined): string {
  return incoming !== null && incoming !== undefined && SANE_ID.test(incoming)
    ? incoming
    : crypto.randomUUID();
}
