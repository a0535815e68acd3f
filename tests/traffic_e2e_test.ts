/**
 * `deno task traffic` against a live router + 2 backends (tiny model): its counts equal
 * the router's `switchyard_router_requests_total`, and a skewed mix makes the first
 * request type's preferred experts (from the model's `demo_traffic.json`) the hot ones
 * in `/api/load`.
 */
import assert from "node:assert/strict";
import { loadDemoTraffic } from "../tools/model/traffic.ts";
import { startPool } from "../tools/pool/processes.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** Sum of `switchyard_router_requests_total{model=…}` per `code`. */
async function routerCounts(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts: Record<string, number> = {};
  const pattern = /^switchyard_router_requests_total\{([^}]*)\} (\S+)$/gm;
  for (const [, labels, value] of text.matchAll(pattern)) {
    if (!labels!.includes(`model="${TINY.name}"`)) continue;
    const code = /code="(\d+)"/.exec(labels!)![1]!;
    counts[code] = (counts[code] ?? 0) + Number(value);
  }
  return counts;
}

Deno.test("deno task traffic: counts match the router's metrics; skewed makes the expected experts hot", async () => {
  const modelDir = await makeTinyModel();
  const traffic = (await loadDemoTraffic(modelDir))!;
  const pool = await startPool({ modelDir, backends: 2 });
  try {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "task",
        "traffic",
        ...["--url", pool.router.url, "--model-dir", modelDir, "--mix", "skewed"],
        ...["--rate", "30", "--duration", "4s", "--tokens", "2-6", "--json"],
      ],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, stderr);
    const summary = JSON.parse(new TextDecoder().decode(output.stdout));
    // The live line went to stderr (--json keeps stdout for the summary).
    assert.match(
      stderr,
      /\[\s*\d+\/4 s skewed\] sent \d+ {2}ok \d+ {2}shed \d+ {2}err \d+ {2}p50 /,
    );

    // Every request the generator sent, the router counted — by status code.
    assert.ok(summary.sent > 0);
    assert.equal(summary.sent, summary.ok + summary.shed + summary.errors);
    assert.deepEqual(await routerCounts(pool.router.url), summary.statuses);
    assert.equal(summary.by_type.chat > summary.by_type.math, true, "Zipf: chat dominates");

    // The hot experts are the ones the model makes "chat" (the first type) prefer.
    const deadline = Date.now() + 60_000;
    let layers: { layer: number; ewma_tokens_s: number[] }[] = [];
    while (Date.now() < deadline) {
      const load = await (await fetch(`${pool.router.url}/api/load`)).json();
      layers = load.models.find((m: { model: string }) => m.model === TINY.name)?.layers ?? [];
      if (
        layers.length === TINY.layers && layers.every((l) => l.ewma_tokens_s.some((v) => v > 0))
      ) {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(layers.length, TINY.layers, "load reports arrived");
    for (const layer of layers) {
      const rates = layer.ewma_tokens_s;
      const chat = traffic.preferred_experts[layer.layer]![0]!;
      // Chat's preferred experts run hotter on average than the rest (one other expert may
      // still top them by chance: a few hundred tokens over 4 s on a busy machine).
      const mean = (experts: number[]) =>
        experts.reduce((sum, e) => sum + rates[e]!, 0) / experts.length;
      const others = rates.map((_, e) => e).filter((e) => !chat.includes(e));
      assert.ok(
        mean(chat) > mean(others),
        `layer ${layer.layer}: chat's experts ${chat} are not the hot ones (${rates})`,
      );
      // Chat is ~65 % of requests (Zipf 1.5 over 3 types); an even mix would give its
      // experts about a third of the load.
      const total = rates.reduce((sum, v) => sum + v, 0);
      const share = chat.reduce((sum, e) => sum + rates[e]!, 0) / total;
      assert.ok(share > 0.45, `layer ${layer.layer}: chat's experts carry ${share} of the load`);
    }
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
