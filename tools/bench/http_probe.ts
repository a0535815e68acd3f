/** @module Small HTTP helpers the benchmarks share: a JSON GET and a bounded poll. */

/** GETs `url` and parses its JSON body; throws on a non-2xx status. */
export async function json(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
  return await response.json();
}

/** Polls `probe` every 250 ms for up to `ms`; true once it answers true (errors count as false). */
export async function waitFor(probe: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}
