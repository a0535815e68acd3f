/** @module Backend discovery: static, DNS and register sources and the loop keeping the pool. */
export { type BackendSource, normaliseUrls, staticSource } from "./backend_source.ts";
export { dnsSource, type Resolve } from "./dns_source.ts";
export { BackendRegistry, REGISTRY_PREFIX, type RegistryEntry } from "./backend_registry.ts";
export { announceRoutes } from "./announce_routes.ts";
export { Discovery, type MembershipChange, membershipChange } from "./discovery.ts";
export { createDiscovery, type RouterDiscovery } from "./create_discovery.ts";
