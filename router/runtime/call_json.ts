/**
 * @module One JSON call from the router to another service (a backend's internal API, a
 * webhook), bounded by a timeout on the injected clock. Never throws: the outcome is
 * the parsed body, or a reason an operator can read — `HTTP 503: <the body's error>`,
 * `timed out after 5000 ms`, `connection failed: …`.
 */
import type { Clock } from "./clock.ts";
import type { FetchLike } from "./fetch_like.ts";

/** The outcome of {@linkcode callJson}. */
export type JsonCallResult =
  | { ok: true; status: number; body: unknown }
  | { ok: false; reason: string };

/** What to send. */
export interface JsonCallRequest {
  method: string;
  /** Sent as `authorization: Bearer …` when set; never part of a reason. */
  token?: string | undefined;
  /** JSON-encoded when present. */
  body?: unknown;
  timeoutMs: number;
  /** Extra headers (e.g. the plan owner's). */
  headers?: Record<string, string>;
}

/** Calls `url`; a 2xx answer is `ok` (its body parsed, `undefined` if not JSON). */
export async function callJson(
  deps: { fetch: FetchLike; clock: Pick<Clock, "setTimeout" | "clearTimeout"> },
  url: string,
  request: JsonCallRequest,
): Promise<JsonCallResult> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = deps.clock.setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, request.timeoutMs);
  const headers = new Headers(request.headers);
  if (request.token !== undefined) headers.set("authorization", `Bearer ${request.token}`);
  if (request.body !== undefined) headers.set("content-type", "application/json");
  try {
    const response = await deps.fetch(url, {
      method: request.method,
      headers,
      signal: controller.signal,
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
    });
    const text = await response.text();
    let body: unknown = undefined;
    try {
      body = JSON.parse(text);
    } catch {
      // Judged by status; a 2xx without JSON is the caller's to reject.
    }
    if (!response.ok) {
      const error = (body as { error?: unknown } | undefined)?.error;
      return {
        ok: false,
        reason: `HTTP ${response.status}${typeof error === "string" ? `: ${error}` : ""}`,
      };
    }
    return { ok: true, status: response.status, body };
  } catch (error) {
    if (timedOut) return { ok: false, reason: `timed out after ${request.timeoutMs} ms` };
    return {
      ok: false,
      reason: `connection failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  } finally {
    deps.clock.clearTimeout(timer);
  }
}
