/**
 * @module `auth.viewer_token`: when set, the dashboard pages, their files and streams
 * (`/dashboard…`, `/api/stream`, `/api/dashboard/snapshot`) answer only viewers, so
 * anonymous connections cannot take the streams an operator needs.
 *
 * A viewer presents the viewer (or admin) token as `Authorization: Bearer …`, or as the
 * `switchyard_viewer` cookie. EventSource cannot send headers, so a page opened once with
 * `?token=…` sets that cookie (HttpOnly, SameSite=Strict) and is redirected to the same
 * URL without the token; its scripts and streams then carry the cookie. Unset: open, as
 * before (read-only pages, no request data or secrets).
 */
import { hasBearerToken } from "../../../shared/bearer_token.ts";
import { ApiError } from "../../../shared/errors.ts";

/** The cookie carrying the viewer token. */
export const VIEWER_COOKIE = "switchyard_viewer";

/** Path prefixes the gate covers. */
export const VIEWER_PATHS = ["/dashboard", "/api/stream", "/api/dashboard/"] as const;

function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

function cookie(headers: Headers, name: string): string | undefined {
  for (const part of (headers.get("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at <= 0 || part.slice(0, at).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The tokens that open the gate: the viewer token and, when set, the admin token. */
export interface ViewerTokens {
  viewer: string;
  admin?: string | undefined;
}

/** Whether `path` is behind the gate. */
export function gated(path: string): boolean {
  return VIEWER_PATHS.some((prefix) =>
    path === prefix || path.startsWith(prefix.endsWith("/") ? prefix : `${prefix}/`)
  );
}

/** What the gate does with one request. */
export type GateDecision =
  | { kind: "pass" }
  | { kind: "redirect"; location: string; setCookie: string }
  | { kind: "refuse"; error: ApiError };

/** Decides for a request to a gated path (pure: no I/O). */
export function decideViewer(request: Request, tokens: ViewerTokens): GateDecision {
  const valid = [tokens.viewer, ...(tokens.admin ? [tokens.admin] : [])];
  if (valid.some((token) => hasBearerToken(request.headers, token))) return { kind: "pass" };
  const fromCookie = cookie(request.headers, VIEWER_COOKIE);
  if (fromCookie !== undefined && valid.some((token) => sameText(fromCookie, token))) {
    return { kind: "pass" };
  }
  const url = new URL(request.url);
  const fromQuery = url.searchParams.get("token");
  if (request.method === "GET" && fromQuery !== null && valid.some((t) => sameText(fromQuery, t))) {
    url.searchParams.delete("token");
    return {
      kind: "redirect",
      location: `${url.pathname}${url.search}`,
      setCookie: `${VIEWER_COOKIE}=${
        encodeURIComponent(fromQuery)
      }; Path=/; HttpOnly; SameSite=Strict${url.protocol === "https:" ? "; Secure" : ""}`,
    };
  }
  return {
    kind: "refuse",
    error: new ApiError(
      "unauthorized",
      "Cannot show the dashboard: auth.viewer_token is set; open it once with ?token=<viewer token> or send it as a bearer token",
    ),
  };
}
