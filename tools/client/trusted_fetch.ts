/**
 * @module A `fetch` for clients of the router that trusts a configured certificate: the
 * router's own certificate when it is self-signed (`router.tls.cert`), or the CA that
 * signed it (`router.tls.ca`).
 *
 * Why not `fetch` with `Deno.createHttpClient({ caCerts })`: Deno's fetch (rustls/webpki)
 * refuses a certificate that is its own CA — `openssl req -x509` makes exactly that
 * (`basicConstraints CA:TRUE`) — with `CaUsedAsEndEntity`, whatever the trust list says.
 * `node:https` with `ca` verifies the chain against the given PEM and accepts it, as curl
 * and browsers do. So HTTPS with a configured CA goes through `node:https` (keep-alive
 * agent); everything else through the global `fetch`.
 */
import https from "node:https";
import type { FetchLike } from "../../router/runtime/fetch_like.ts";
import { concatBytes } from "../../shared/concat_bytes.ts";

/** Options of {@linkcode createTrustedFetch}. */
export interface TrustedFetchOptions {
  /** PEM text of the certificate(s) to trust for `https:` URLs; unset: the system's roots. */
  ca?: string;
  /**
   * Check that the certificate names the URL's host (default true). The launcher turns
   * it off for its readiness probe of its own child on loopback: trust is the pinned
   * certificate, whatever names it carries.
   */
  checkHostname?: boolean;
}

/** A fetch that trusts `options.ca` for HTTPS, plus `close()` for its connections. */
export interface TrustedFetch extends FetchLike {
  close(): void;
}

/** Builds a {@linkcode TrustedFetch}. */
export function createTrustedFetch(options: TrustedFetchOptions = {}): TrustedFetch {
  const ca = options.ca;
  if (ca === undefined) return Object.assign(globalThis.fetch.bind(globalThis), { close() {} });
  const agent = new https.Agent({
    keepAlive: true,
    ca,
    ...(options.checkHostname === false ? { checkServerIdentity: () => undefined } : {}),
  });
  const trusted = async (input: Request | URL | string, init?: RequestInit) => {
    const request = new Request(input, init);
    if (new URL(request.url).protocol !== "https:") return await globalThis.fetch(request);
    return await viaNode(request, agent);
  };
  return Object.assign(trusted, { close: () => agent.destroy() });
}

async function viaNode(request: Request, agent: https.Agent): Promise<Response> {
  const body = request.body === null ? undefined : new Uint8Array(await request.arrayBuffer());
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => headers[name] = value);
  if (body !== undefined) headers["content-length"] = String(body.byteLength);
  return await new Promise<Response>((resolve, reject) => {
    const outgoing = https.request(
      request.url,
      { method: request.method, headers, agent },
      (res) => {
        const chunks: Uint8Array[] = [];
        res.on("data", (chunk: Uint8Array) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue;
            for (const item of Array.isArray(value) ? value : [value]) {
              responseHeaders.append(name, item);
            }
          }
          const status = res.statusCode ?? 502;
          const payload = status === 204 || status === 304 ? null : concatBytes(chunks);
          resolve(new Response(payload, { status, headers: responseHeaders }));
        });
      },
    );
    outgoing.on("error", reject);
    request.signal.addEventListener("abort", () => outgoing.destroy(request.signal.reason));
    outgoing.end(body);
  });
}
