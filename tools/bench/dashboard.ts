// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:dashboard`: the dashboard's initial load time and live update
 * interval, measured in Debian's Chromium (playwright-core) against a live stack.
 *
 *   Step 1: generate a model (`--experts`, `--layers`), start `--backends` backends and a
 *           router, send skewed traffic (one request type) so the heatmap has data.
 *   Step 2: initial load, `--runs` times, each in a fresh browser context (cold cache,
 *           ECharts included): navigation start → the first frame painted with the canvas
 *           heatmap (`switchyardDashboard.firstHeatmapMs`, relative to navigation start).
 *           ECharts is imported after that paint, for the detail charts (timed beside it).
 *           Then `--runs` repeat visits in one context (ECharts from the immutable cache).
 *   Step 3: update interval: the gaps between stream events the page received over
 *           `--watch` seconds (1440×900; then a screenshot to
 *           `out/screenshots/bench-dashboard-<layers>x<experts>.png`).
 *   Step 4: advice: the first `GET /api/advice` (the router precomputes it from its load
 *           rounds), repeat calls, and `?refresh=1` calls beside them (a full computation:
 *           planner preview and a backend's bias evaluation — what a first call cost before
 *           the precompute), in the same run.
 * Targets (issues 5, 14): initial load < 1 s on loopback, updates at least every 2 s,
 * advice < 1 s. `--out <file>` also writes the tables as markdown with the command.
 */
import { launchChromium } from "../browser/chromium.ts";
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
    out: {
      type: "string",
      value: "<file>",
      description: "also write the results as markdown (e.g. docs/results/dashboard-61x256.md)",
    },
  },
});

const experts = Number(values.experts);
const layers = Number(values.layers);
const dModel = Number(values["d-model"]);
const modelDir = await Deno.makeTempDir({ prefix: "switchyard-bench-dashboard-" });
console.log(`generating a model: ${layers} layers × ${experts} experts …`);
await generateModel(modelDir, {
  name: "bench-moe",
  dModel,
  dFf: 2 * dModel,
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
    const { body } = encodeInferRequest(demoTokens(traffic, "code", 4, random), dModel);
    await fetch(`${pool.router.url}/v2/models/bench-moe/infer`, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", "x-request-type": "code" },
    }).then((r) => r.body?.cancel()).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
})();

/** Wall milliseconds of one GET of `path` on the router (body read). */
async function timedGet(path: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${pool.router.url}${path}`);
  await response.text();
  if (!response.ok) throw new Error(`GET ${path}: ${response.status}`);
  return performance.now() - started;
}

/**
 * One cold page load in a fresh browser context. With `preload`, the page's HTML gains
 * `<link rel="modulepreload">` for ECharts (fetched and compiled alongside the snapshot);
 * both variants go through the same request interception.
 */
async function coldLoad(preload: boolean) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  await context.route(`${pool.router.url}/dashboard`, async (route) => {
    const response = await route.fetch();
    let body = await response.text();
    const src = /name="switchyard-echarts" content="([^"]+)"/.exec(body)?.[1];
    if (preload && src !== undefined) {
      body = body.replace("</title>", `</title>\n<link rel="modulepreload" href="${src}">`);
    }
    await route.fulfill({ response, body });
  });
  const page = await context.newPage();
  page.on("pageerror", (error) => console.error(`page error: ${error}`));
  await page.goto(`${pool.router.url}/dashboard`);
  await page.waitForFunction(() =>
    // deno-lint-ignore no-explicit-any
    (globalThis as any).switchyardDashboard?.firstHeatmapMs != null &&
    performance.getEntriesByName("switchyard:details-rendered").length > 0
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
    details: performance.getEntriesByName("switchyard:details-rendered")[0]?.startTime ?? NaN,
    modules: performance.getEntriesByName("switchyard:modules-evaluated")[0]?.startTime ?? NaN,
    // The snapshot's request (the page's preload): sent, first byte, last byte.
    ...(() => {
      // deno-lint-ignore no-explicit-any
      const entry: any = performance.getEntriesByType("resource")
        .find((e) => e.name.endsWith("/api/dashboard/snapshot"));
      return {
        snapshotSent: entry?.requestStart ?? NaN,
        snapshotFirstByte: entry?.responseStart ?? NaN,
        snapshotLastByte: entry?.responseEnd ?? NaN,
      };
    })(),
  }));
  await context.close();
  return timing;
}

try {
  // Wait for load data on every layer, so the page renders a full, busy heatmap (an idle
  // grid would time a heatmap of zeros: refuse to measure that).
  let busy = false;
  for (let i = 0; i < 150 && !busy; i++) {
    const load = await (await fetch(`${pool.router.url}/api/load`)).json();
    const rows: number[][] = (load.models[0]?.layers ?? []).map((
      l: { expert_tokens_s: number[] },
    ) => l.expert_tokens_s);
    busy = rows.length === layers && rows.every((r) => r.some((v) => v > 0));
    if (!busy) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (!busy) throw new Error("Cannot measure: the traffic never reached every layer's experts");
  // Step 4 first (nothing has asked for advice yet): two load rounds for the router's
  // precompute, the first call, then repeats, then forced recomputations (at most one per
  // 5 s, so spaced).
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const firstStarted = performance.now();
  const firstBody = await (await fetch(`${pool.router.url}/api/advice`)).json();
  const adviceFirst = performance.now() - firstStarted;
  const adviceRepeat: number[] = [];
  for (let i = 0; i < 5; i++) adviceRepeat.push(await timedGet("/api/advice"));
  const adviceCompute: number[] = [];
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 5500));
    adviceCompute.push(await timedGet("/api/advice?refresh=1"));
  }
  // Step 2: initial load, cold cache each run; beside it, in the same run, the variant
  // that preloads ECharts with the page (what the page did before the canvas heatmap).
  const loads: number[] = [];
  const htmlDone: number[] = [];
  const echartsDone: number[] = [];
  const snapshotDone: number[] = [];
  const renderDone: number[] = [];
  const detailsDone: number[] = [];
  const modulesDone: number[] = [];
  const snapshotSent: number[] = [];
  const snapshotFirstByte: number[] = [];
  const snapshotLastByte: number[] = [];
  const eager = { loads: [] as number[], snapshot: [] as number[], echarts: [] as number[] };
  for (let run = 0; run < Number(values.runs); run++) {
    const order = run % 2 === 0 ? [false, true] : [true, false];
    for (const preload of order) {
      const timing = await coldLoad(preload);
      if (preload) {
        eager.loads.push(timing.heatmap);
        eager.snapshot.push(timing.snapshot);
        eager.echarts.push(timing.echarts);
        continue;
      }
      loads.push(timing.heatmap);
      htmlDone.push(timing.html);
      echartsDone.push(timing.echarts);
      snapshotDone.push(timing.snapshot);
      renderDone.push(timing.rendered);
      detailsDone.push(timing.details);
      modulesDone.push(timing.modules);
      snapshotSent.push(timing.snapshotSent);
      snapshotFirstByte.push(timing.snapshotFirstByte);
      snapshotLastByte.push(timing.snapshotLastByte);
    }
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
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(`${pool.router.url}/dashboard`);
  await new Promise((resolve) => setTimeout(resolve, Number(values.watch) * 1000));
  // The page as it looked at the end (an artifact under out/, like the tests' screenshots).
  const shot = new URL(
    `../../out/screenshots/bench-dashboard-${layers}x${experts}.png`,
    import.meta.url,
  );
  await Deno.mkdir(new URL(".", shot), { recursive: true });
  await page.screenshot({ path: shot.pathname });
  console.log(`screenshot: ${shot.pathname}`);
  const times: number[] = await page.evaluate(() =>
    // deno-lint-ignore no-explicit-any
    (globalThis as any).switchyardDashboard.streamTimes
  );
  const gaps = times.slice(1).map((t, i) => t - times[i]!);
  const snapshotBytes = (await (await fetch(`${pool.router.url}/api/dashboard/snapshot`)).text())
    .length;
  const title = `dashboard on loopback: ${layers} layers × ${experts} experts, ` +
    `${values.backends} backends, snapshot ${round(snapshotBytes / 1024, 1)} KiB`;
  console.log(`\n${title}`);
  const row = (name: string, values: number[]) => [
    name,
    values.length,
    round(quantile(values, 0.5), 1),
    round(Math.min(...values), 1),
    round(Math.max(...values), 1),
  ];
  const header = ["measure", "n", "p50 ms", "min ms", "max ms"];
  const rows = [
    row("page HTML received", htmlDone),
    row("page modules evaluated", modulesDone),
    row("snapshot request sent (preload)", snapshotSent),
    row("snapshot first byte", snapshotFirstByte),
    row("snapshot last byte", snapshotLastByte),
    row("first snapshot received (parsed)", snapshotDone),
    row("first render call done", renderDone),
    row("ECharts evaluated (imported after the heatmap's paint)", echartsDone),
    row("detail charts rendered (ECharts)", detailsDone),
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
    row("variant, ECharts preloaded with the page: first snapshot received", eager.snapshot),
    row("variant, ECharts preloaded with the page: ECharts evaluated", eager.echarts),
    row("variant, ECharts preloaded with the page: initial load", eager.loads),
    row(`advice: first call (${firstBody.partial ? "precomputed, partial" : "full"})`, [
      adviceFirst,
    ]),
    row("advice: repeat calls (cached)", adviceRepeat),
    row("advice: ?refresh=1 (full computation)", adviceCompute),
  ];
  console.log(formatTable(header, rows));
  if (values.out !== undefined) {
    const command = `deno task bench:dashboard ${Deno.args.join(" ")}`;
    await Deno.writeTextFile(values.out, resultsMarkdown(command, title, header, rows));
    console.log(`wrote ${values.out}`);
  }
} finally {
  stop = true;
  await sender;
  await browser.close();
  await pool.close();
  await Deno.remove(modelDir, { recursive: true });
}

/** The results file: command, what ran, the table, and how to read it. */
function resultsMarkdown(
  command: string,
  title: string,
  header: string[],
  rows: (string | number)[][],
): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [
    `# Dashboard and advice timings (${
      title.split(",")[0]!.replace("dashboard on loopback: ", "")
    })`,
    "",
    `Command: \`${command}\` (written by \`tools/bench/dashboard.ts\`). Debian's Chromium, loopback,`,
    "on the shared 2-vCPU development VM (other helpers' runs may share the cores): compare rows",
    "within this run only.",
    "",
    `${title}.`,
    "",
    line(header),
    line(header.map(() => "---")),
    ...rows.map(line),
    "",
    "- initial load: navigation start → the first frame painted with the canvas heatmap (an",
    "  animation frame after the draw, then a task: the paint lies between them), fresh",
    "  browser context each run (cold cache); repeat visit: same context (ECharts cached).",
    "  ECharts is imported only after that paint; its evaluation and the detail charts below",
    "  the heatmap are timed in their own rows.",
    "- update interval: gaps between the snapshots the live page received over the stream.",
    "- advice: wall time of `GET /api/advice` from the bench process, 2 s after load appears.",
    "  The first call is answered from the advice the router precomputed from its load rounds",
    "  (`partial`: without the gate-bias evaluation, which it starts), or from a full",
    "  computation when the precompute had not run; `?refresh=1` forces the full computation",
    "  (planner preview over every layer and a backend's bias evaluation), which the first call",
    "  paid before the precompute.",
    "",
  ].join("\n");
}
