/** @module The router's TLS files and the host name clients should use. */
import { type Config, ConfigError } from "../../shared/config.ts";

/** The cert/key pair of `router.tls`, read; `undefined` for plain HTTP. */
export async function readTls(
  config: Pick<Config, "router">,
): Promise<{ cert: string; key: string } | undefined> {
  const tls = config.router.tls;
  if (tls === undefined) return undefined;
  const read = async (field: "cert" | "key") => {
    try {
      return await Deno.readTextFile(tls[field]);
    } catch (error) {
      throw new ConfigError(
        `Invalid config: router.tls.${field}: cannot read "${tls[field]}" (${
          (error as Error).message
        })`,
      );
    }
  };
  return { cert: await read("cert"), key: await read("key") };
}

/** A listening host as clients should write it (wildcards shown as localhost). */
export function publicHost(hostname: string): string {
  if (hostname === "0.0.0.0" || hostname === "::" || hostname === "") return "localhost";
  return hostname.includes(":") ? `[${hostname}]` : hostname;
}
