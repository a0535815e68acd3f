/**
 * @module `auth.viewer_token`: when set, the dashboard pages, their files and streams
 * (`/dashboard…`, `/api/stream`, `/api/dashboard/snapshot`) answer only viewers, so
 * anonymous connections cannot take the streams an operator needs; with
 * `auth.viewer_covers` also every `/api` read (`api`: GET and HEAD under `/api/`) and
 * `/metrics` (`metrics`: Prometheus then scrapes with the token as bearer credentials).
 *
 * A viewer presents the viewer (or admin) token as `Authorization: Bearer …`, or as the
 * `switchyard_viewer` cookie. EventSource cannot send headers, so a page opened once with
 * `?token=…` sets that cookie (HttpOnly, SameSite=Strict) and is redirected to the same
 * URL without the token; its scripts and streams then carry the cookie. A browser asking
 * for a page without it gets a small page prompting for the token (401, a GET form that
 * sends `?token=`), not raw JSON. Unset: open, as before (read-only pages, no request
 * data or secrets). Inference (`/v2/…`) is never behind it.
 */
import { hasBearerToken } from "../../../shared/bearer_token.ts";
import { ApiError } from "../../../shared/errors.ts";

/** The cookie carrying the viewer token. */
export const VIEWER_COOKIE = "switchyard_viewer";

/** Path prefixes the gate always covers. */
export const VIEWER_PATHS = ["/dashboard", "/api/stream", "/api/dashboard/"] as const;

/** What `auth.viewer_covers` may add to the pages: `/api` reads, `/metrics`. */
export type ViewerCover = "api" | "metrics";

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

/** Whether `path` is behind the gate (`method` and `covers`: the optional scopes). */
export function gated(
  path: string,
  method = "GET",
  covers: readonly ViewerCover[] = [],
): boolean {
  const under = (prefix: string) =>
    path === prefix || path.startsWith(prefix.endsWith("/") ? prefix : `${prefix}/`);
  if (VIEWER_PATHS.some(under)) return true;
  if (
    covers.includes("api") && (method === "GET" || method === "HEAD") && path.startsWith("/api/")
  ) {
    return true;
  }
  return covers.includes("metrics") && path === "/metrics";
}

/** What the gate does with one request. */
export type GateDecision =
  | { kind: "pass" }
  | { kind: "redirect"; location: string; setCookie: string }
  /** `prompt`: a browser asked for a page; answer {@linkcode tokenPromptPage}. */
  | { kind: "refuse"; error: ApiError; prompt: boolean };

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
  const what = url.pathname === "/metrics"
    ? "read the metrics"
    : url.pathname.startsWith("/dashboard")
    ? "show the dashboard"
    : `read ${url.pathname}`;
  return {
    kind: "refuse",
    error: new ApiError(
      "unauthorized",
      `Cannot ${what}: auth.viewer_token is set; open it once with ?token=<viewer token> or send it as a bearer token`,
    ),
    prompt: request.method === "GET" && url.pathname.startsWith("/dashboard") &&
      (request.headers.get("accept") ?? "").includes("text/html"),
  };
}

/**
 * The page a browser gets instead of a 401's JSON: asks for the token and sends it as
 * `?token=` to the same page (which trades it for the cookie). Static text only.
 */
export function tokenPromptPage(): Response {
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchyard: viewer token needed</title><link rel="icon" href="data:,">
<style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}
input{font:inherit;width:100%;padding:.4rem;margin:.5rem 0}button{font:inherit;padding:.4rem 1rem}</style>
</head>
<body>
<h1>Switchyard dashboard</h1>
<p>This router's dashboard is behind <code>auth.viewer_token</code>. Enter the viewer (or admin)
token; it is kept in an HttpOnly cookie for this site.</p>
<form method="get"><label for="token">Viewer token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Open the dashboard</button></form>
</body>
</html>
`;
  return new Response(html, {
    status: 401,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy":
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'",
      "www-authenticate": 'Bearer realm="switchyard dashboard"',
    },
  });
}

/** Options of {@linkcode viewerMiddleware}. */
export interface ViewerGateOptions {
  tokens: ViewerTokens;
  /** `auth.viewer_covers`: `/api` reads, `/metrics`. */
  covers?: readonly ViewerCover[];
}

/** The gate as middleware: register it before every route it covers. */
export function viewerMiddleware(options: ViewerGateOptions) {
  return async (
    c: { req: { path: string; method: string; raw: Request } },
    next: () => Promise<void>,
  ): Promise<Response | void> => {
    if (!gated(c.req.path, c.req.method, options.covers)) return await next();
    const decision = decideViewer(c.req.raw, options.tokens);
    if (decision.kind === "refuse") {
      if (decision.prompt) return tokenPromptPage();
      throw decision.error;
    }
    if (decision.kind === "redirect") {
      return new Response(null, {
        status: 303,
        headers: { location: decision.location, "set-cookie": decision.setCookie },
      });
    }
    await next();
  };
}
