/**
 * @module DNS discovery: every address a name resolves to is a backend — a Kubernetes
 * headless Service answers one A/AAAA record per ready pod, and SRV records
 * (`_http._tcp.<svc>.<ns>.svc.cluster.local`) with each pod's port. SRV targets are
 * resolved to addresses through the same resolver. A name that does not exist
 * (NXDOMAIN: a headless Service with no ready pod) is an empty pool; any other failure
 * throws, and the pool is kept.
 */
import type { BackendSource } from "./backend_source.ts";
import { normaliseUrls } from "./backend_source.ts";

/** The part of `Deno.resolveDns` DNS discovery uses (injectable for unit tests). */
export type Resolve = (
  query: string,
  recordType: "A" | "AAAA" | "SRV",
  options?: Deno.ResolveDnsOptions,
) => Promise<string[] | Deno.SrvRecord[]>;

/** Options of {@linkcode dnsSource}. */
export interface DnsSourceOptions {
  name: string;
  record: "A" | "AAAA" | "SRV";
  /** Backends' port for A/AAAA records. */
  port: number;
  scheme: "http" | "https";
  /** `host:port` of the resolver to ask; default the system's. */
  nameserver?: string | undefined;
  /** Default `Deno.resolveDns`. */
  resolve?: Resolve;
}

function nameServer(text: string | undefined): Deno.ResolveDnsOptions {
  if (text === undefined) return {};
  const at = text.lastIndexOf(":");
  const ipAddr = text.slice(0, at).replace(/^\[|\]$/g, "");
  return { nameServer: { ipAddr, port: Number(text.slice(at + 1)) } };
}

function hostPart(address: string): string {
  return address.includes(":") ? `[${address}]` : address;
}

/** A source re-resolving `options.name` at every `list()`. */
export function dnsSource(options: DnsSourceOptions): BackendSource {
  const resolve = options.resolve ?? (Deno.resolveDns as Resolve);
  const dns = nameServer(options.nameserver);
  const url = (address: string, port: number) => `${options.scheme}://${hostPart(address)}:${port}`;

  async function lookUp<T>(query: string, type: "A" | "AAAA" | "SRV"): Promise<T[]> {
    try {
      return await resolve(query, type, dns) as T[];
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      throw new Error(`Cannot resolve ${type} "${query}": ${(error as Error).message}`);
    }
  }

  return {
    name: "dns",
    async list() {
      if (options.record !== "SRV") {
        const addresses = await lookUp<string>(options.name, options.record);
        return normaliseUrls(addresses.map((address) => url(address, options.port)));
      }
      const records = await lookUp<Deno.SrvRecord>(options.name, "SRV");
      const urls = await Promise.all(records.map(async ({ target, port }) => {
        const host = target.replace(/\.$/, "");
        const [v4, v6] = await Promise.all([
          lookUp<string>(host, "A"),
          lookUp<string>(host, "AAAA"),
        ]);
        return [...v4, ...v6].map((address) => url(address, port));
      }));
      return normaliseUrls(urls.flat());
    },
  };
}
