/**
 * @module Where the router of a configuration answers and which certificate its clients
 * trust — one rule for the launcher's banner and readiness probe, the CLIs and the
 * traffic generator: `http(s)://<router.host, wildcards as localhost>:<router.port>`
 * (the same form the router logs), trusting `router.tls.ca`, else `router.tls.cert`.
 */
import type { Config } from "../../shared/config.ts";
import { publicHost } from "../../router/wire/tls.ts";

/** The URL clients on this machine use for the configured router. */
export function routerUrl(config: Config): string {
  const scheme = config.router.tls ? "https" : "http";
  return `${scheme}://${publicHost(config.router.host)}:${config.router.port}`;
}

/**
 * PEM text clients trust for the router: the CA file `router.tls.ca` when set (a
 * CA-signed certificate), else the certificate itself (self-signed); `undefined` for
 * plain HTTP. Throws naming the field when the file cannot be read.
 */
export async function routerTrust(config: Config): Promise<string | undefined> {
  const tls = config.router.tls;
  if (tls === undefined) return undefined;
  const [field, path] = tls.ca !== undefined ? ["ca", tls.ca] : ["cert", tls.cert];
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    throw new Error(
      `Cannot trust the router's certificate: router.tls.${field}: cannot read "${path}" (${
        (error as Error).message
      })`,
    );
  }
}
