/**
 * @module The router settings `bench:router-rss` compares side by side: each variant is
 * extra environment for one router process (allocator, V8 and Switchyard knobs), all
 * routers in front of the same backends.
 */

/** One router setup under test. */
export interface RssVariant {
  name: string;
  /** What it changes, for the report. */
  what: string;
  env: Record<string, string>;
  /** The load generator's bound on outstanding requests (default 8,192): a client-side cap. */
  maxOutstanding?: number;
}

/** A router on its `node:http` front with `router.max_connections` at `cap`. */
function nodeFront(name: string, cap: number, note: string): RssVariant {
  return {
    name,
    what: `\`router.http_server: node\`, \`router.max_connections\` ${cap} (${note})`,
    env: {
      SWITCHYARD_ROUTER__HTTP_SERVER: "node",
      SWITCHYARD_ROUTER__MAX_CONNECTIONS: String(cap),
    },
  };
}

/** Every variant; `defaults` first (the reference). */
export const RSS_VARIANTS: readonly RssVariant[] = [
  {
    name: "defaults",
    what: "README defaults",
    env: {},
  },
  {
    name: "deno",
    what: "`router.http_server: deno` (`Deno.serve`: no connection cap)",
    env: { SWITCHYARD_ROUTER__HTTP_SERVER: "deno" },
  },
  nodeFront("node", 1024, "refused beyond"),
  nodeFront("nocap", 100_000, "timeouts, no cap in reach"),
  nodeFront("cap512", 512, "refused beyond"),
  nodeFront("cap256", 256, "refused beyond"),
  {
    name: "arena2",
    what: "glibc `MALLOC_ARENA_MAX=2` (fewer malloc arenas for the runtime's threads)",
    env: { MALLOC_ARENA_MAX: "2" },
  },
  {
    name: "semi1",
    what: "V8 `--max-semi-space-size=1` (1 MiB young-generation semi-spaces)",
    env: { DENO_V8_FLAGS: "--max-semi-space-size=1" },
  },
  {
    name: "inflight64",
    what:
      "`router.admission.max_in_flight` 64 (fewer requests, streams and backend connections at once)",
    env: { SWITCHYARD_ROUTER__ADMISSION__MAX_IN_FLIGHT: "64" },
  },
  {
    name: "h2",
    what: "`router.backend_protocol: http2` (requests as streams on shared backend connections)",
    env: { SWITCHYARD_ROUTER__BACKEND_PROTOCOL: "http2" },
  },
  {
    name: "clients1024",
    what:
      "`Deno.serve`; the load generator keeps ≤ 1,024 requests outstanding (not a router knob: shows RSS follows open client connections)",
    env: { SWITCHYARD_ROUTER__HTTP_SERVER: "deno" },
    maxOutstanding: 1024,
  },
  {
    name: "arena2+semi1",
    what: "both runtime knobs",
    env: { MALLOC_ARENA_MAX: "2", DENO_V8_FLAGS: "--max-semi-space-size=1" },
  },
];

/** The variants named in `list` (comma-separated), in the order given; all when empty. */
export function pickVariants(list: string | undefined): RssVariant[] {
  if (list === undefined || list.trim() === "") return [...RSS_VARIANTS];
  return list.split(",").map((name) => {
    const variant = RSS_VARIANTS.find((v) => v.name === name.trim());
    if (variant === undefined) {
      throw new RangeError(
        `Cannot pick variant "${name.trim()}": known are ${
          RSS_VARIANTS.map((v) => v.name).join(", ")
        }`,
      );
    }
    return variant;
  });
}
