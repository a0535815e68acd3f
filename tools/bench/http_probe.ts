/** @module A small HTTP helper the benchmarks share: a JSON GET. */

/** GETs `url` and parses its JSON body; throws on a non-2xx status. */
export async function json(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
  return await response.json();
}
