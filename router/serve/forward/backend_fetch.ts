/**
 * @module The HTTP client of the router → backend inference hop, per
 * `router.backend_protocol`: `http1` — the global fetch (HTTP/1.1, keep-alive pooled
 * connections); `http2` — one client that speaks HTTP/2 only (h2c with prior knowledge
 * on `http://`, ALPN on `https://`), every request a stream on shared connections.
 * `deno task bench:hop` compares both on one machine in one run (docs/results/hop.md).
 */
import type { FetchLike } from "../../runtime/fetch_like.ts";

/** `router.backend_protocol`. */
export type BackendProtocol = "http1" | "http2";

/** A fetch for the inference hop and a close for its client (a no-op for `http1`). */
export interface BackendFetch {
  fetch: FetchLike;
  close(): void;
}

/** The client for `protocol`; an HTTP/2 client is created on first use. */
export function backendFetch(protocol: BackendProtocol): BackendFetch {
  if (protocol === "http1") return { fetch: globalThis.fetch, close: () => {} };
  let client: Deno.HttpClient | undefined;
  return {
    fetch: (input, init) => {
      client ??= Deno.createHttpClient({ http1: false, http2: true });
      return globalThis.fetch(input, { ...init, client });
    },
    close: () => {
      client?.close();
      client = undefined;
    },
  };
}
