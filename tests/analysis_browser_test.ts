/**
 * The Analysis and Advisor pages in a real browser (Debian's Chromium driven by
 * playwright-core, launched like `dashboard_browser_test.ts`) against a live stack with
 * typed traffic: both pages load from the main dashboard's links, their charts render
 * the API's data, the advisor shows every recommendation and the doctor's checklist with
 * the measured values, and the console stays clean. Without Chromium the test is skipped
 * (and fails under `CI`).
 */
import assert from "node:assert/strict";
import { createRandom } from "../tools/model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { startPool } from "../tools/pool/processes.ts";
import { launchChromium } from "../tools/browser/chromium.ts";
import { chromiumForTest } from "./_support/browser.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

const present = await chromiumForTest("the analysis browser test");

Deno.test({
  name: "the Analysis and Advisor pages render the analysis, advice and doctor APIs",
  ignore: !present,
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const modelDir = await makeTinyModel();
  const demo = (await loadDemoTraffic(modelDir))!;
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: { SWITCHYARD_TRAFFIC__BUCKET: "1s" },
  });
  const base = pool.router.url;
  const browser = await launchChromium();
  try {
    // Typed traffic, then a few seconds for the buckets to close and flush.
    const random = createRandom(3);
    for (let i = 0; i < 20; i++) {
      await Promise.all(
        (["chat", "code", "math"] as const).map((type) =>
          infer(base, TINY.name, demoTokens(demo, type, 3, random), TINY.dModel, {
            requestType: type,
          })
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 3000));

    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const problems: string[] = [];
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    page.on("pageerror", (error) => problems.push(String(error)));

    // Step 1: the main dashboard links to both pages; follow the Analysis link.
    await page.goto(`${base}/dashboard`);
    await page.click('header nav a[href="/dashboard/analysis"]');
    await page.waitForFunction(
      () =>
        // deno-lint-ignore no-explicit-any
        ((globalThis as any).switchyardAnalysis?.renders ?? 0) >= 1,
      undefined,
      { timeout: 20_000 },
    );
    const analysis = await page.evaluate(() => {
      // deno-lint-ignore no-explicit-any
      const a = (globalThis as any).switchyardAnalysis;
      const series = (name: string) => a.charts[name].getOption().series;
      return {
        error: a.error,
        activation: series("activation").map((s: { name: string }) => s.name),
        heatmapCells: series("correlation")[0].data.length,
        types: a.charts.correlation.getOption().yAxis[0].data,
        efficiency: series("efficiency").map((s: { name: string }) => s.name),
        balance: series("balance").map((s: { name: string }) => s.name),
        body: a.last.correlation,
      };
    });
    assert.equal(analysis.error, null);
    assert.equal(analysis.activation[0], "all experts (right axis)");
    assert.ok(analysis.activation.length >= 2, `activation lines ${analysis.activation}`);
    assert.deepEqual(analysis.types, ["chat", "code", "math"]);
    assert.equal(analysis.heatmapCells, 3 * TINY.experts);
    assert.ok(analysis.efficiency.includes("pool tokens/s"));
    assert.deepEqual(analysis.balance, ["top 10 % share", "CV"]);
    assert.equal(await page.locator("#correlation-table tr[data-type]").count(), 3);
    const power = await page.textContent('[data-fact="power"]');
    const efficiency = await (await fetch(`${base}/api/analysis/efficiency`)).json();
    assert.equal(power, efficiency.power);

    // Step 2: the Advisor page: one card per recommendation, the doctor's checks.
    await page.click('header nav a[href="/dashboard/advisor"]');
    await page.waitForFunction(
      () =>
        // deno-lint-ignore no-explicit-any
        ((globalThis as any).switchyardAdvisor?.renders ?? 0) >= 1,
      undefined,
      { timeout: 30_000 },
    );
    const shown = await page.evaluate(() => {
      // deno-lint-ignore no-explicit-any
      const a = (globalThis as any).switchyardAdvisor;
      return { error: a.error, advice: a.advice, doctor: a.doctor };
    });
    assert.equal(shown.error, null);
    assert.equal(await page.locator("article.advice").count(), shown.advice.advice.length);
    for (const advice of shown.advice.advice) {
      const card = page.locator(`article.advice[data-id="${advice.id}"]`);
      assert.equal(await card.locator('[data-field="risk"]').textContent(), advice.risk);
      assert.equal(
        await card.locator('[data-field="evidence"] li').count(),
        advice.evidence.length,
      );
    }
    for (const check of shown.doctor.checks) {
      const row = page.locator(`#doctor-table tr[data-check="${check.id}"]`);
      assert.equal(await row.locator('[data-field="measured"]').textContent(), check.measured);
      assert.equal(await row.locator('[data-field="answer"]').textContent(), check.answer);
    }
    assert.match(await page.textContent("#verdict") ?? "", new RegExp(shown.doctor.verdict));
    assert.match(await page.textContent("#panel-apply") ?? "", /deno task advise --apply/);
    assert.deepEqual(problems, [], "browser console errors");
  } finally {
    await browser.close();
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
