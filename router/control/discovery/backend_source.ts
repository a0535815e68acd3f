/**
 * @module Where the pool's members come from. A source answers the backends' base URLs
 * now; the discovery loop (`discovery.ts`) turns the difference into pool additions and
 * removals. A source that cannot answer throws, and the pool stays as it was.
 */

/** One way of finding backends. */
export interface BackendSource {
  /** `static` | `dns` | `register`. */
  readonly name: string;
  /** Base URLs of the backends now (normalised, sorted, unique). */
  list(): Promise<string[]>;
}

/** `http://h:p/` → `http://h:p`; sorted and unique. */
export function normaliseUrls(urls: Iterable<string>): string[] {
  return [...new Set([...urls].map((url) => url.replace(/\/+$/, "")))].sort();
}

/** `router.backends`: the configured list, never changing. */
export function staticSource(urls: readonly string[]): BackendSource {
  const list = normaliseUrls(urls);
  return { name: "static", list: () => Promise.resolve([...list]) };
}
