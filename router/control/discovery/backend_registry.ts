/**
 * @module Register discovery's shared state: backends announce themselves (through any
 * router, `POST /api/backends/announce`) and every router reads the same registry from
 * Deno KV. Each backend has its own key, `["discovery", "backends", url]` →
 * `{url, id, expiresAt}`, so announcements never contend; an entry not renewed within
 * the TTL no longer counts (explicit `expiresAt`: KV's own expiry is only a backstop).
 */
import type { Clock } from "../../runtime/clock.ts";
import { withKvRetry } from "../state/kv_retry.ts";
import type { BackendSource } from "./backend_source.ts";
import { normaliseUrls } from "./backend_source.ts";

/** Key prefix of registry entries. */
export const REGISTRY_PREFIX: Deno.KvKey = ["discovery", "backends"];

/** One announced backend. */
export interface RegistryEntry {
  url: string;
  /** The backend's own id, when it said it. */
  id: string | null;
  expiresAt: number;
}

/** Backends announced in shared state; see the module doc. */
export class BackendRegistry {
  readonly #kv: Deno.Kv;
  readonly #clock: Pick<Clock, "now">;
  readonly #ttlMs: number;

  constructor(kv: Deno.Kv, options: { clock: Pick<Clock, "now">; ttlMs: number }) {
    this.#kv = kv;
    this.#clock = options.clock;
    this.#ttlMs = options.ttlMs;
  }

  /** Records (or renews) `url` for one TTL. */
  async announce(url: string, id: string | null = null): Promise<RegistryEntry> {
    const [clean] = normaliseUrls([url]);
    const entry: RegistryEntry = { url: clean!, id, expiresAt: this.#clock.now() + this.#ttlMs };
    // KV expiry is a backstop only: it keeps entries readable for a while after.
    const expireIn = Math.max(this.#ttlMs * 4, 60_000);
    await withKvRetry(() => this.#kv.set([...REGISTRY_PREFIX, entry.url], entry, { expireIn }));
    return entry;
  }

  /** Removes `url` at once (a backend shutting down). */
  async withdraw(url: string): Promise<void> {
    const [clean] = normaliseUrls([url]);
    await withKvRetry(() => this.#kv.delete([...REGISTRY_PREFIX, clean!]));
  }

  /** Entries still within their TTL, by URL. */
  async entries(): Promise<RegistryEntry[]> {
    const now = this.#clock.now();
    const live: RegistryEntry[] = [];
    const list = () => Array.fromAsync(this.#kv.list<RegistryEntry>({ prefix: REGISTRY_PREFIX }));
    for (const { value } of await withKvRetry(list)) if (value.expiresAt > now) live.push(value);
    return live.sort((a, b) => a.url.localeCompare(b.url));
  }

  /** The registry as a discovery source. */
  source(): BackendSource {
    return {
      name: "register",
      list: async () => normaliseUrls((await this.entries()).map((entry) => entry.url)),
    };
  }
}
