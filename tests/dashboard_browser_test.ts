/**
 * The dashboard in a real browser (Debian's Chromium driven by playwright-core) against
 * a live stack with skewed traffic: heatmap cells equal `/api/load`, snapshots arrive
 * without a reload, node resources say "n/a" where the API has no value (columns every
 * backend lacks are left out), the plan panel shows the placement choice and EPLB health,
 * and a backend stopped with SIGSTOP shows up at once: the other keeps fresh reports, the
 * header and its table row turn red, and a `backend_down` alert fires; a screenshot lands
 * in `out/dashboard.png`. Without Chromium the test is skipped (and fails under `CI`).
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { createRandom } from "../tools/model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { startPool } from "../tools/pool/processes.ts";
import { launchChromium } from "../tools/browser/chromium.ts";
import { chromiumForTest } from "./_support/browser.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { waitFor } from "./_support/wait_for.ts";

const SCREENSHOT = new URL("../out/dashboard.png", import.meta.url).pathname;

const present = await chromiumForTest("the dashboard browser test");

/** Saves the page to `out/dashboard.png` (a test artifact) and prints the path. */
async function screenshot(page: Page): Promise<void> {
  await Deno.mkdir(new URL("../out/", import.meta.url), { recursive: true });
  await page.screenshot({ path: SCREENSHOT, fullPage: true });
  // deno-lint-ignore no-console
  console.log(`dashboard screenshot: ${SCREENSHOT}`);
}

type Layers = { layer: number; expert_tokens_s: number[] }[];

/** The heatmap's cells as layers, and the snapshot the page rendered them from. */
function pageHeatmap(page: Page) {
  return page.evaluate(() => {
    // deno-lint-ignore no-explicit-any
    const d = (globalThis as any).switchyardDashboard;
    // What the canvas heatmap drew: its layers and one row of values per layer.
    const drawn = d.heatmap.model();
    const layers: number[] = drawn.layers;
    const rows: number[][] = drawn.rows.map((r: number[]) => [...r]);
    return {
      at: d.lastSnapshot.at as number,
      updates: d.updates as number,
      chart: layers.map((layer, y) => ({ layer, expert_tokens_s: rows[y]! })),
      snapshot: d.lastSnapshot.load.models[0].layers.map((
        l: { layer: number; expert_tokens_s: number[] },
      ) => ({ layer: l.layer, expert_tokens_s: l.expert_tokens_s })),
    };
  });
}

Deno.test({
  name: "the dashboard shows live expert load equal to /api/load, resources and an alert",
  ignore: !present,
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const modelDir = await makeTinyModel();
  const traffic = (await loadDemoTraffic(modelDir))!;
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: { SWITCHYARD_ALERTS__RAISE_AFTER: "1", SWITCHYARD_ALERTS__CLEAR_AFTER: "3" },
  });
  const browser = await launchChromium();
  // Skewed traffic: one request type, whose preferred experts get hot.
  let stop = false;
  const random = createRandom(5);
  const load = Array.from({ length: 2 }, async () => {
    while (!stop) {
      const tokens = demoTokens(traffic, "code", 4, random);
      await infer(pool.router.url, TINY.name, tokens, TINY.dModel, { requestType: "code" })
        .catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const problems: string[] = [];
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    page.on("pageerror", (error) => problems.push(String(error)));
    await page.goto(`${pool.router.url}/dashboard`);

    // Step 1: heatmap cells equal the API (rates change once per round: retry until the
    // page and the API show the same round).
    const matched = await waitFor("heatmap equal to /api/load", async () => {
      const shown = await pageHeatmap(page);
      assert.deepEqual(shown.chart, shown.snapshot, "chart cells differ from the page's snapshot");
      const api = await (await fetch(`${pool.router.url}/api/load`)).json();
      const apiLayers: Layers = api.models[0]?.layers ?? [];
      const expected = apiLayers.map((l) => ({
        layer: l.layer,
        expert_tokens_s: l.expert_tokens_s,
      }));
      const busy = expected.some((l) => l.expert_tokens_s.some((v) => v > 0));
      if (!busy || JSON.stringify(expected) !== JSON.stringify(shown.chart)) return undefined;
      return shown;
    });
    assert.equal(matched.chart.length, TINY.layers);
    assert.equal(matched.chart[0]!.expert_tokens_s.length, TINY.experts);
    const layer0 = matched.chart[0]!.expert_tokens_s;
    const preferred = traffic.preferred_experts[0]![traffic.request_types.indexOf("code")]!;
    const hot = preferred.reduce((sum, e) => sum + layer0[e]!, 0);
    const total = layer0.reduce((sum, v) => sum + v, 0);
    assert.ok(hot > total / 2, `preferred ${preferred} carry ${hot} of ${total} tokens/s`);

    // Step 2: live updates arrive without a reload.
    await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));
    await waitFor("a newer snapshot", async () => {
      const now = await pageHeatmap(page);
      return now.at > matched.at && now.updates > matched.updates ? now : undefined;
    }, { timeoutMs: 5000 });
    assert.equal(await page.evaluate(() => Reflect.get(globalThis, "notReloaded")), true);
    assert.equal(await page.textContent("#status"), "live");

    // Step 3: node resources: one row per backend; "n/a" exactly where the API has null.
    const api = await (await fetch(`${pool.router.url}/api/load`)).json();
    for (const backend of api.backends) {
      const row = page.locator(`#resources-table tr[data-backend="${backend.name}"]`);
      assert.equal(await row.count(), 1, `resource row of ${backend.name}`);
      const cell = async (field: string) =>
        await row.locator(`td[data-field="${field}"]`).textContent();
      // No backend reads power here: the column is left out rather than all "n/a".
      assert.equal(backend.power_w, null);
      assert.equal(await row.locator('td[data-field="power"]').count(), 0);
      if (backend.rss_bytes !== null) assert.notEqual(await cell("memory"), "n/a");
      assert.equal(await cell("state"), "fresh");
      // Cold starts: a count wherever the backend reports them (every real backend does).
      assert.equal(typeof backend.cold_starts, "number", "cold_starts in /api/load");
      assert.match((await cell("coldStartsBoth")) ?? "", /^[\d,]+ \(/);
    }
    // The table fits the 1440 px viewport (no horizontal scroll).
    const overflow = await page.$eval(
      "#resources-table",
      (table) => table.scrollWidth - table.parentElement!.clientWidth,
    );
    assert.ok(overflow <= 0, `the resources table overflows by ${overflow} px`);
    assert.notEqual(await page.textContent('[data-fact="version"]'), null);
    // The plan panel's EPLB block: the placement decision and the balancer's health. Two
    // backends without a memory budget: full replication fits and hops cost something.
    const eplb = async (key: string) => await page.textContent(`#eplb-facts [data-eplb="${key}"]`);
    assert.equal(await eplb("choice"), "full replication (auto)");
    assert.match((await eplb("remote-row")) ?? "", /^[\d.,]+ ms \((measured|assumed)\)$/);
    assert.match((await eplb("rebalances")) ?? "", /^[1-9]\d* switched, 0 failed$/);
    assert.equal(await eplb("due"), "no");

    // Step 4: choosing another layer switches the time view (the stream reconnects).
    await page.selectOption("#layer-select", "1");
    await waitFor("the layer 1 timeline", async () =>
      await page.evaluate(() =>
        // deno-lint-ignore no-explicit-any
        (globalThis as any).switchyardDashboard.lastSnapshot.timeline?.layer === 1 || undefined
      ), { timeoutMs: 5000 });
    assert.equal(await page.getAttribute("#chart-replicas", "data-kind"), "rates");
    await screenshot(page);
    assert.deepEqual(problems, [], "browser console errors");

    // Step 5: SIGSTOP one backend (its process hangs, connections stay open): the header
    // and its row turn red, the other keeps fresh reports, backend_down fires.
    const alertsWired = await page.evaluate(() =>
      // deno-lint-ignore no-explicit-any
      (globalThis as any).switchyardDashboard.lastSnapshot.alerts !== null
    );
    assert.ok(alertsWired, "the router serves no alerts (snapshot.alerts is null)");
    const stopped = pool.backends[1]!.child.pid;
    Deno.kill(stopped, "SIGSTOP");
    try {
      await page.waitForSelector('#backends-health[data-health="bad"]', { timeout: 20_000 });
      assert.match((await page.textContent("#backends-problems")) ?? "", /backend-2 (stale|down)/);
      assert.equal(await page.getAttribute("#status", "data-state"), "degraded");
      await page.waitForSelector(
        '#alerts-table tr[data-kind="backend_down"][data-state="firing"]',
        { timeout: 30_000 },
      );
      const subject = await page.textContent(
        '#alerts-table tr[data-kind="backend_down"] td[data-field="subject"]',
      );
      assert.match(subject ?? "", /backend-2|127\.0\.0\.1/);
      assert.match(
        (await page.getAttribute('#resources-table tr[data-backend="backend-2"]', "data-state")) ??
          "",
        /stale|down/,
      );
      // The running backend still reports: fresh, and the heatmap still draws its load.
      const healthy = await (await fetch(`${pool.router.url}/api/load`)).json();
      const first = healthy.backends.find((b: { name: string }) => b.name === "backend-1");
      assert.equal(first.state, "fresh", JSON.stringify(first));
      assert.equal(
        await page.getAttribute('#resources-table tr[data-backend="backend-1"]', "data-state"),
        "fresh",
      );
      await screenshot(page);
    } finally {
      Deno.kill(stopped, "SIGCONT");
    }
    assert.deepEqual(problems, [], "browser console errors");
  } finally {
    stop = true;
    await Promise.all(load);
    await browser.close();
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
