/**
 * The dashboard at fleet width, in Debian's Chromium at 1440×900: a generated 256-expert
 * model (3 layers, top-8 of 8 groups) on two backends under skewed traffic.
 *
 * - every expert column is in the rendered heatmap, equal to `/api/load`, and the whole
 *   expert range is shown (no zoom by default); the canvas heatmap's data model is
 *   checked against the API and its pixels against the model (each cell's centre pixel
 *   has the colour of its value);
 * - the hottest experts of layer 0 are drawn inside the viewport, and hovering one shows
 *   its layer, expert and value;
 * - no two text labels of any chart overlap (their laid-out bounding boxes);
 * - the hot-experts table lists the hottest expert first;
 * - the Advisor page shows its frame and the doctor before a (delayed) advice arrives.
 *
 * Screenshots of the three pages go to `out/screenshots/` (test artifacts); the first
 * heatmap paint time is printed, never asserted.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { generateModel } from "../tools/model/generate.ts";
import { createRandom } from "../tools/model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { startPool } from "../tools/pool/processes.ts";
import { launchChromium } from "../tools/browser/chromium.ts";
import { chromiumForTest } from "./_support/browser.ts";
import { infer } from "./_support/client.ts";
import { waitFor } from "./_support/wait_for.ts";

const WIDE = {
  name: "wide-moe",
  dModel: 16,
  dFf: 16,
  layers: 3,
  experts: 256,
  topK: 8,
  groups: 8,
  topkGroup: 4,
  sharedExperts: 1,
} as const;
const VIEWPORT = { width: 1440, height: 900 };
const SHOTS = new URL("../out/screenshots/", import.meta.url);

const present = await chromiumForTest("the wide dashboard browser test");

async function shoot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SHOTS, { recursive: true });
  const path = new URL(name, SHOTS).pathname;
  await page.screenshot({ path, fullPage: false });
  // deno-lint-ignore no-console
  console.log(`screenshot: ${path}`);
}

interface TextBox {
  chart: string;
  text: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

/**
 * Every text label on the page's charts with its box in px: what ECharts laid out on the
 * detail charts, and the canvas heatmap's labels (the boxes it drew its text in).
 */
function textBoxes(page: Page, global: string): Promise<TextBox[]> {
  return page.evaluate((global) => {
    // deno-lint-ignore no-explicit-any
    const d = (globalThis as any)[global];
    // deno-lint-ignore no-explicit-any
    const charts = d.charts as Record<string, any>;
    const out: TextBox[] = [];
    for (const l of d.heatmap.model().labels) {
      out.push({ chart: "heatmap", text: l.text, x: l.x, y: l.y, w: l.w, h: l.h });
    }
    for (const [name, chart] of Object.entries(charts)) {
      for (const el of chart.getZr().storage.getDisplayList(true)) {
        if (el.type !== "tspan" || el.invisible || el.ignore || !el.style?.text) continue;
        const rect = el.getBoundingRect().clone();
        const transform = el.getComputedTransform();
        if (transform) rect.applyTransform(transform);
        out.push({
          chart: name,
          text: String(el.style.text),
          x: rect.x,
          y: rect.y,
          w: rect.width,
          h: rect.height,
        });
      }
    }
    return out;
  }, global);
}

function overlaps(boxes: TextBox[]): string[] {
  const found: string[] = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i]!, boxes[j]!];
      if (a.chart !== b.chart) continue;
      const w = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
      const h = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
      if (w > 0.5 && h > 0.5) found.push(`${a.chart}: "${a.text}" overlaps "${b.text}"`);
    }
  }
  return found;
}

Deno.test({
  name: "the dashboard at 256 experts shows every expert, the hot ones, and readable labels",
  ignore: !present,
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const modelDir = await Deno.makeTempDir({ prefix: "switchyard-wide-" });
  await generateModel(modelDir, { ...WIDE, seed: 3, requestTypes: ["chat", "code", "math"] });
  const traffic = (await loadDemoTraffic(modelDir))!;
  const pool = await startPool({ modelDir, backends: 2 });
  const browser = await launchChromium();
  let stop = false;
  const random = createRandom(11);
  const load = Array.from({ length: 2 }, async () => {
    while (!stop) {
      const tokens = demoTokens(traffic, "code", 8, random);
      await infer(pool.router.url, WIDE.name, tokens, WIDE.dModel, { requestType: "code" })
        .catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
  try {
    const page = await browser.newPage({ viewport: VIEWPORT });
    const problems: string[] = [];
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    page.on("pageerror", (error) => problems.push(String(error)));
    await page.goto(`${pool.router.url}/dashboard`);

    // Step 1: all 256 expert columns of every layer, equal to /api/load in the same round.
    const shown = await waitFor("a heatmap equal to /api/load", async () => {
      const view = await page.evaluate(() => {
        // deno-lint-ignore no-explicit-any
        const d = (globalThis as any).switchyardDashboard;
        const drawn = d.heatmap.model();
        // The drawn pixels: each cell's centre must have its value's colour.
        const canvas = d.heatmap.canvas;
        const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
        let wrong = 0;
        let checked = 0;
        drawn.rows.forEach((row: number[], y: number) => {
          row.forEach((value: number, expert: number) => {
            const at = d.heatmap.cellCentreOnPage(y, expert);
            if (at === null) return;
            const box = canvas.getBoundingClientRect();
            const px = Math.floor((at.x - box.left) * drawn.pixelRatio);
            const py = Math.floor((at.y - box.top) * drawn.pixelRatio);
            const i = (py * canvas.width + px) * 4;
            const want = d.heatmap.colourOf(value);
            checked++;
            if (want.some((c: number, k: number) => Math.abs(c - pixels.data[i + k]!) > 3)) wrong++;
          });
        });
        return {
          columns: drawn.experts as number,
          cells: drawn.rows.reduce((n: number, r: number[]) => n + r.length, 0) as number,
          window: drawn.window as [number, number],
          rows: drawn.rows.map((r: number[]) => [...r]) as number[][],
          checked,
          wrong,
        };
      });
      const api = await (await fetch(`${pool.router.url}/api/load`)).json();
      const apiRows: number[][] = (api.models?.[0]?.layers ?? []).map((
        l: { expert_tokens_s: number[] },
      ) => l.expert_tokens_s);
      const busy = apiRows.some((r) => r.some((v) => v > 0));
      if (!busy || JSON.stringify(apiRows) !== JSON.stringify(view.rows)) return undefined;
      return view;
    });
    assert.equal(shown.columns, WIDE.experts, "one column per expert");
    assert.equal(shown.cells, WIDE.layers * WIDE.experts, "a cell for every (layer, expert)");
    assert.deepEqual(shown.window, [0, WIDE.experts], "no zoom: every expert shown");
    assert.equal(shown.checked, WIDE.layers * WIDE.experts, "every cell's pixel checked");
    assert.equal(shown.wrong, 0, "cells whose pixel has another value's colour");
    // Step 2: the five hottest experts of layer 0 are drawn inside the viewport.
    const layer0 = shown.rows[0]!;
    const hottest = [...layer0.keys()].sort((a, b) => layer0[b]! - layer0[a]!).slice(0, 5);
    const positions = await page.evaluate((experts) => {
      // deno-lint-ignore no-explicit-any
      const heatmap = (globalThis as any).switchyardDashboard.heatmap;
      return experts.map((e: number) => ({ expert: e, ...heatmap.cellCentreOnPage(0, e) }));
    }, hottest);
    for (const p of positions) {
      assert.ok(p.x >= 0 && p.x <= VIEWPORT.width, `expert ${p.expert} at x ${p.x}`);
      assert.ok(p.y >= 0 && p.y <= VIEWPORT.height, `expert ${p.expert} at y ${p.y}`);
    }

    // Step 2b: hovering the hottest one shows its layer, expert and the drawn value.
    const hot = positions[0]!;
    await page.mouse.move(hot.x, hot.y);
    const tip = await page.evaluate((expert) => {
      // deno-lint-ignore no-explicit-any
      const heatmap = (globalThis as any).switchyardDashboard.heatmap;
      const drawn = heatmap.model();
      return {
        text: heatmap.tip.hidden ? null : heatmap.tip.textContent as string,
        layer: drawn.layers[0] as number,
        value: drawn.rows[0][expert] as number,
      };
    }, hot.expert);
    const value = tip.value.toLocaleString("en-US", { maximumFractionDigits: 3 });
    assert.equal(tip.text, `layer ${tip.layer}, expert ${hot.expert}: ${value} tokens/s`);
    await page.mouse.move(0, 0);

    // Step 3: the hot-experts table leads with the page's hottest expert.
    const top = await waitFor("the hot-experts table", async () => {
      const rows = await page.locator("#hot-table tbody tr").count();
      return rows === 10 ? await page.locator("#hot-table tbody tr").first() : undefined;
    });
    // Table row and snapshot read in one evaluation: a live update (every second) cannot land
    // between them. Compared by value, so a tie for the hottest may lead with either expert.
    const lead = await page.evaluate(() => {
      // deno-lint-ignore no-explicit-any
      const layers = (globalThis as any).switchyardDashboard.lastSnapshot.load.models[0].layers;
      let best = -1;
      for (const l of layers) for (const v of l.expert_tokens_s) best = Math.max(best, v);
      // deno-lint-ignore no-explicit-any
      const row = (globalThis as any).document.querySelector("#hot-table tbody tr");
      const layer = Number(row.getAttribute("data-layer"));
      const expert = Number(row.getAttribute("data-expert"));
      // deno-lint-ignore no-explicit-any
      const rowLayer = layers.find((l: any) => l.layer === layer);
      return { best, value: rowLayer ? rowLayer.expert_tokens_s[expert] : null };
    });
    assert.ok(lead.best > 0, "the snapshot has load");
    assert.equal(lead.value, lead.best, "the hot table leads with the snapshot's hottest expert");
    assert.notEqual(await top.locator('td[data-field="backends"]').textContent(), "n/a");

    // Step 4: no overlapping labels on any chart of the page (detail charts included).
    await waitFor("the detail charts", async () =>
      await page.evaluate(() =>
        // deno-lint-ignore no-explicit-any
        (globalThis as any).switchyardDashboard.charts.timeline !== undefined || undefined
      ));
    await page.waitForTimeout(500);
    const boxes = await textBoxes(page, "switchyardDashboard");
    assert.ok(boxes.length > 20, `${boxes.length} labels found`);
    const heatLabels = boxes.filter((b) => b.chart === "heatmap");
    assert.ok(heatLabels.length >= 10, `${heatLabels.length} heatmap labels`);
    assert.deepEqual(overlaps(boxes), [], "overlapping labels");
    await shoot(page, "dashboard-256.png");
    const paintMs = await page.evaluate(() =>
      // deno-lint-ignore no-explicit-any
      (globalThis as any).switchyardDashboard.firstHeatmapMs as number | null
    );
    // deno-lint-ignore no-console
    console.log(`first heatmap paint: ${Math.round(paintMs ?? NaN)} ms after navigation start`);
    assert.deepEqual(problems, [], "browser console errors");

    // Step 5: analysis page renders (screenshot).
    const analysis = await browser.newPage({ viewport: VIEWPORT });
    await analysis.goto(`${pool.router.url}/dashboard/analysis`);
    await analysis.waitForSelector("body[data-renders]", { timeout: 20_000 });
    await shoot(analysis, "analysis-256.png");

    // Step 6: the Advisor's frame and doctor come before a slow advice answer.
    const advisor = await browser.newPage({ viewport: VIEWPORT });
    let release!: () => void;
    const held = new Promise<void>((resolve) => release = resolve);
    await advisor.route("**/api/advice", async (route) => {
      await held;
      await route.continue();
    });
    await advisor.goto(`${pool.router.url}/dashboard/advisor`);
    await advisor.waitForSelector("#doctor-table tr[data-check]", { timeout: 20_000 });
    assert.equal(await advisor.locator('[data-loading="advice"]').count(), 1, "advice pending");
    assert.ok(await advisor.isVisible("#panel-advice"));
    release();
    await advisor.waitForSelector("#advice-list article.advice", { timeout: 30_000 });
    await shoot(advisor, "advisor-256.png");
  } finally {
    stop = true;
    await Promise.all(load);
    await browser.close();
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
