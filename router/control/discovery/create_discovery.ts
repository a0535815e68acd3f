/**
 * @module `router.discovery` → a running source: `static` needs no loop (the pool is
 * `router.backends`); `dns` re-resolves a name; `register` reads the backends'
 * announcements from shared state (and needs it: without KV it fails fast).
 */
import { type Config, ConfigError } from "../../../shared/config.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { Clock } from "../../runtime/clock.ts";
import { BackendRegistry } from "./backend_registry.ts";
import { type DiscoveredPool, Discovery, type MembershipChange } from "./discovery.ts";
import { dnsSource, type Resolve } from "./dns_source.ts";

/** What {@linkcode createDiscovery} wires. */
export interface CreateDiscoveryDeps {
  pool: DiscoveredPool;
  kv: Deno.Kv | undefined;
  clock: Clock;
  logger: Logger;
  onChange?: (change: MembershipChange) => void;
  /** DNS resolver; default `Deno.resolveDns`. */
  resolve?: Resolve;
}

/** The discovery loop and, for `register`, the registry it reads. */
export interface RouterDiscovery {
  discovery: Discovery | undefined;
  registry: BackendRegistry | undefined;
}

/** Builds discovery for `config.router.discovery`; throws ConfigError when it cannot run. */
export function createDiscovery(
  config: Pick<Config, "router">,
  deps: CreateDiscoveryDeps,
): RouterDiscovery {
  const settings = config.router.discovery;
  const loop = { clock: deps.clock, logger: deps.logger, intervalMs: settings.interval };
  const options = deps.onChange ? { ...loop, onChange: deps.onChange } : loop;
  if (settings.mode === "dns") {
    const source = dnsSource({
      name: settings.name!,
      record: settings.record,
      port: settings.port,
      scheme: settings.scheme,
      nameserver: settings.nameserver,
      ...(deps.resolve ? { resolve: deps.resolve } : {}),
    });
    return { discovery: new Discovery(source, deps.pool, options), registry: undefined };
  }
  if (settings.mode === "register") {
    if (deps.kv === undefined) {
      throw new ConfigError(
        "Invalid config: router.discovery.mode: register needs shared state (state.kv could not be opened)",
      );
    }
    const registry = new BackendRegistry(deps.kv, { clock: deps.clock, ttlMs: settings.ttl });
    return { discovery: new Discovery(registry.source(), deps.pool, options), registry };
  }
  return { discovery: undefined, registry: undefined };
}
