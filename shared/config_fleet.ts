/**
 * @module The configuration sections for running many routers and a changing pool:
 * `router.discovery` (where backends come from), `leader` (the lease that picks the
 * router running the control loops) and `backend.announce` (register discovery's
 * heartbeats). Part of {@linkcode ConfigSchema} in `config.ts`.
 */
import { z } from "zod";
import { DurationSchema } from "./duration.ts";

const HttpUrl = z.url({ protocol: /^https?$/ });
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):\d{1,5}$/;

/** `router.discovery`. */
export const DiscoverySchema = z.object({
  /**
   * `static`: `router.backends`; `dns`: every address `name` resolves to (A/AAAA) or
   * every SRV target, re-resolved every `interval`; `register`: backends that announced
   * themselves (`backend.announce`) within `ttl`.
   */
  mode: z.enum(["static", "dns", "register"]).default("static"),
  /** dns: the name to resolve, e.g. a headless Service's `_http._tcp.<svc>.<ns>.svc.cluster.local`. */
  name: z.string().min(1).optional(),
  record: z.enum(["A", "AAAA", "SRV"]).default("A"),
  /** dns with A/AAAA records: the backends' port (SRV records carry their own). */
  port: z.int().min(1).max(65535).default(9001),
  scheme: z.enum(["http", "https"]).default("http"),
  /** dns: a resolver `host:port` to ask instead of the system's. */
  nameserver: z.string().regex(HOST_PORT, 'must look like "10.0.0.10:53"').optional(),
  /** How often the pool is re-resolved (dns) or re-read (register). */
  interval: DurationSchema.default(5000),
  /** register: a backend not heard from for this long leaves the pool. */
  ttl: DurationSchema.default(15_000),
}).prefault({}).refine((d) => d.mode !== "dns" || d.name !== undefined, {
  message: "must be set when router.discovery.mode is dns",
  path: ["name"],
});

/** `leader`. */
export const LeaderSchema = z.object({
  /** Off: every router runs the control loops (one router, or tests). */
  enabled: z.boolean().default(true),
  /** A leader not renewing for this long is replaced (failover time). */
  ttl: DurationSchema.default(10_000),
  /** Renewal (and, for followers, takeover attempt) period; at most half of `ttl`. */
  renew_interval: DurationSchema.default(3000),
  /** This router's name in the lease; default a random one per start. */
  id: z.string().min(1).max(200).optional(),
}).prefault({}).refine((l) => l.renew_interval > 0 && l.renew_interval * 2 <= l.ttl, {
  message: "must be positive and at most half of leader.ttl",
  path: ["renew_interval"],
});

/** `backend.announce`. */
export const AnnounceSchema = z.object({
  /** A router's base URL (any of them, or the ingress in front); unset: no heartbeats. */
  router: HttpUrl.optional(),
  /** The URL routers should use for this backend; default `http://<host>:<port>`. */
  url: HttpUrl.optional(),
  interval: DurationSchema.default(5000),
}).prefault({});
