/**
 * @module The `fetch` shape the router depends on, so tests can inject a fake backend.
 */

/** A `fetch`-compatible function (the global `fetch` satisfies it). */
export type FetchLike = (input: Request | URL | string, init?: RequestInit) => Promise<Response>;
