// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:dashboard`: the dashboard's initial load time and live update
 * interval, measured in Debian's Chromium (playwright-core) against a live stack.
 *
 *   Step 1: generate a model (`--experts`, `--layers`), start `--backends` backends and a
 *           router, send skewed traffic (one request type) so the heatmap has data.
 *   Step 2: initial load, `--runs` times, each in a fresh browser context (cold cache,
 *           ECharts included): navigation start → the heatmap's first `finished` render
 *           (`switchyardDashboard.firstHeatmapMs`, relative to navigation start).
 *           Then `--runs` repeat visits in one context (ECharts from the immutable cache).
 *   Step 3: update interval: the gaps between stream events the page received over
 *           `--watch` seconds.
 * Targets (issue 5): initial load < 1 s on loopback, updates at least every 2 s.
 */
import { launchChromium } from "../../tests/_support/browser.ts";
import { generateModel } from "../model/generate.ts";
import { createRandom } from "../model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../model/traffic.ts";
import { startPool } from "../pool/processes.ts";
import { encodeInferRequest } from "../../shared/infer_request_codec.ts";
import { formatTable, quantile, round } from "./stats.ts";
import { parseCli } from "../cli/cli_args.ts";

const { values } = parseCli({
  name: "deno task bench:dashboard",
  summary:
    "The dashboard's initial load time and live update interval, measured in Debian's Chromium\nagainst a live stack.",
  options: {
    experts: {
      type: "string",
      default: "64",
      value: "<n>",
      description: "experts per layer of the generated model",
    },
    layers: {
      type: "string",
      default: "4",
      value: "<n>",
      description: "layers of the generated model",
    },
    backends: { type: "string", default: "2", value: "<n>", description: "backend processes" },
    "d-model": {
      type: "string",
      default: "32",
      value: "<n>",
      description: "hidden size of the generated model (small keeps wide models light)",
    },
    runs: {
      type: "string",
      default: "5",
      value: "<n>",
      description: "cold and warm page loads to time",
    },
    watch: {
      type: "string",
      default: "10",
      value: "<s>",
      description: "seconds to watch the live stream",
    },
    chromium: {
      type: "string",
      default: "/usr/bin/chromium",
      value: "<path>",
      description: "Chromium executable",
    },
  },
});

const experts = Number(values.experts);
const layers = Number(values.layers);
const modelDir = await Deno.makeTempDir({ prefix: "switchyard-bench-dashboard-" });
console.log(`generating a model: ${layers} layers × ${experts} experts …`);
await generateModel(modelDir, {
  name: "bench-moe",
  dModel: Number(values["d-model"]),
  dFf: 2 * Number(values["d-model"]),
  layers,
  experts,
  topK: 2,
  groups: 1,
  topkGroup: 1,
  sharedExperts: 0,
  seed: 3,
  requestTypes: ["chat", "code", "math"],
});
const traffic = (await loadDemoTraffic(modelDir))!;
const pool = await startPool({ modelDir, backends: Number(values.backends) });
const browser = await launchChromium(values.chromium);
let stop = false;
const random = createRandom(1);
const sender = (async () => {
  while (!stop) {
    const { body } = encodeInferRequest(demoTokens(traffic, "code", 4, random), 32);
    await fetch(`${pool.router.url}/v2/models/bench-moe/infer`, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", "x-request-type": "code" },
    }).then((r) => r.body?.cancel()).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
})();

try {
  // Wait for load data, so the page renders a full heatmap.
  for (let i = 0; i < 100; i++) {
    const load = await (await fetch(`${pool.router.url}/api/load`)).json();
    if (load.models[0]?.layers?.length === layers) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // Step 2: initial load, cold cache each run.
  const loads: number[] = [];
  const htmlDone: number[] = [];
  const echartsDone: number[] = [];
  const snapshotDone: number[] = [];
  const renderDone: number[] = [];
  for (let run = 0; run < Number(values.runs); run++) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    page.on("pageerror", (error) => console.error(`page error: ${error}`));
    await page.goto(`${pool.router.url}/dashboard`);
    await page.waitForFunction(() =>
      // deno-lint-ignore no-explicit-any
      (globalThis as any).switchyardDashboard?.firstHeatmapMs != null
    ).catch(async (error) => {
      throw new Error(`no heatmap render; status "${await page.textContent("#status")}"`, {
        cause: error,
      });
    });
    const timing = await page.evaluate(() => ({
      // deno-lint-ignore no-explicit-any
      heatmap: (globalThis as any).switchyardDashboard.firstHeatmapMs as number,
      // deno-lint-ignore no-explicit-any
      html: (performance.getEntriesByType("navigation")[0] as any).responseEnd as number,
      echarts: performance.getEntriesByName("switchyard:echarts-loaded")[0]?.startTime ?? NaN,
      snapshot: performance.getEntriesByName("switchyard:snapshot-loaded")[0]?.startTime ?? NaN,
      rendered: performance.getEntriesByName("switchyard:first-render")[0]?.startTime ?? NaN,
    }));
    loads.push(timing.heatmap);
    htmlDone.push(timing.html);
    echartsDone.push(timing.echarts);
    snapshotDone.push(timing.snapshot);
    renderDone.push(timing.rendered);
    await context.close();
  }
  // Step 2b: repeat visits in one context (ECharts from the immutable cache).
  const warm: number[] = [];
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  for (let run = 0; run <= Number(values.runs); run++) {
    const page = await context.newPage();
    await page.goto(`${pool.router.url}/dashboard`);
    await page.waitForFunction(() =>
      // deno-lint-ignore no-explicit-any
      (globalThis as any).switchyardDashboard?.firstHeatmapMs != null
    );
    // deno-lint-ignore no-explicit-any
    const ms = await page.evaluate(() => (globalThis as any).switchyardDashboard.firstHeatmapMs);
    if (run > 0) warm.push(ms); // the first visit fills the cache
    await page.close();
  }
  await context.close();
  // Step 3: update interval over one long-lived page.
  const page = await browser.newPage();
  await page.goto(`${pool.router.url}/dashboard`);
  await new Promise((resolve) => setTimeout(resolve, Number(values.watch) * 1000));
  const times: number[] = await page.evaluate(() =>
    // deno-lint-ignore no-explicit-any
    (globalThis as any).switchyardDashboard.streamTimes
  );
  const gaps = times.slice(1).map((t, i) => t - times[i]!);
  const snapshotBytes = (await (await fetch(`${pool.router.url}/api/dashboard/snapshot`)).text())
    .length;
  console.log(
    `\ndashboard on loopback: ${layers} layers × ${experts} experts, ${values.backends} backends, ` +
      `snapshot ${round(snapshotBytes / 1024, 1)} KiB`,
  );
  const row = (name: string, values: number[]) => [
    name,
    values.length,
    round(quantile(values, 0.5), 1),
    round(Math.min(...values), 1),
    round(Math.max(...values), 1),
  ];
  console.log(formatTable(["measure", "n", "p50 ms", "min ms", "max ms"], [
    row("page HTML received", htmlDone),
    row("ECharts module evaluated", echartsDone),
    row("first snapshot received", snapshotDone),
    row("first render call done", renderDone),
    row("repeat visit (nav → heatmap)", warm),
    [
      "initial load (nav → heatmap)",
      loads.length,
      round(quantile(loads, 0.5), 1),
      round(Math.min(...loads), 1),
      round(Math.max(...loads), 1),
    ],
    [
      "update interval",
      gaps.length,
      round(quantile(gaps, 0.5), 1),
      round(Math.min(...gaps), 1),
      round(Math.max(...gaps), 1),
    ],
  ]));
} finally {
  stop = true;
  await sender;
  await browser.close();
  await pool.close();
  await Deno.remove(modelDir, { recursive: true });
}
