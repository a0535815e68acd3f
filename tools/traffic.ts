// deno-lint-ignore-file no-console
/**
 * @module `deno task traffic`: load for people, not benchmarks. Sends a named scenario
 * (`--mix steady|skewed|shift|spike`) of demo-shaped requests to one router for
 * `--duration`, shows a live one-line progress display (sent, ok, shed, p50/p99,
 * tokens/s), prints a summary and stops by itself (Ctrl-C stops early, still with the
 * summary). It only ever sends to the given URL (default: the local router, found from
 * the same config as `deno task start`) and never follows redirects.
 */
import { join } from "node:path";
import { ModelManifestSchema } from "../shared/model_manifest.ts";
import { quantile } from "./bench/stats.ts";
import { parseCli } from "./cli/cli_args.ts";
import { getJson, routerTargetOrReport } from "./client/router_target.ts";
import { type DemoTraffic, loadDemoTraffic } from "./model/traffic.ts";
import { LiveStats, progressLine } from "./traffic/live_stats.ts";
import { momentOf, runTraffic, type TrafficRun } from "./traffic/run_traffic.ts";
import { TRAFFIC_OPTIONS, type TrafficSettings, trafficSettings } from "./traffic/traffic_args.ts";

const { values } = parseCli({
  name: "deno task traffic",
  summary: "Sends demo traffic to the router for a while and shows what happens: a live line\n" +
    "(sent, ok, shed = 429/503 answers, errors, p50/p99 latency, tokens/s) and a summary.\n" +
    "Scenarios: steady (all request types alike), skewed (Zipf: the first type dominates,\n" +
    "its experts go hot), shift (the ranking rotates every --shift-every), spike (a 5× burst\n" +
    "with its own mix in the middle fifth of the run).",
  options: TRAFFIC_OPTIONS,
  epilog: [
    "Examples:",
    "  deno task traffic --mix skewed                 # a minute at 20 req/s; watch /dashboard",
    "  deno task traffic --rate 50 --duration 5m --mix shift --format json",
  ],
});

/** Exit codes: 0 done, 1 the run could not start (router, model, flags). */
async function main(): Promise<number> {
  let settings: TrafficSettings;
  try {
    settings = trafficSettings(values);
  } catch (error) {
    console.error((error as Error).message);
    return 1;
  }
  const target = await routerTargetOrReport(values, Deno.env.toObject(), console.error);
  if (target === undefined) return 1;

  // The model: name and demo token directions from the model directory, shape from the router.
  const modelDir = values["model-dir"] ?? target.config.model.dir;
  const local = await readModel(modelDir);
  const model = values.model ?? local.name;
  if (model === undefined) {
    console.error(
      `Cannot run traffic: no model name: "${join(modelDir, "moe.json")}" is missing; ` +
        `pass --model <name> (and --model-dir for demo tokens)`,
    );
    return 1;
  }
  let dModel: number;
  try {
    const metadata = await getJson<{ inputs: { shape: number[] }[] }>(
      target,
      `/v2/models/${encodeURIComponent(model)}`,
      `send traffic for model "${model}"`,
    );
    dModel = metadata.inputs[0]!.shape[1]!;
  } catch (error) {
    console.error((error as Error).message);
    return 1;
  }
  const traffic = local.name === model && local.traffic?.directions[0]?.length === dModel
    ? local.traffic
    : undefined;
  if (traffic === undefined) {
    console.error(`note: no demo traffic for "${model}" in ${modelDir}: gaussian tokens`);
  }

  // The run, with a live line: in place on a terminal, every 5 s otherwise.
  const abort = new AbortController();
  Deno.addSignalListener("SIGINT", () => abort.abort());
  const stats = new LiveStats();
  const out = values.json ? Deno.stderr : Deno.stdout;
  const tty = out.isTerminal();
  const types = traffic?.request_types ?? ["default"];
  const line = () =>
    progressLine(
      stats.snapshot(),
      settings.durationS,
      momentOf(settings, types.length, stats.elapsedS()).label,
    );
  const write = (text: string) => out.writeSync(new TextEncoder().encode(text));
  write(
    `Sending ${settings.mix} traffic to ${target.url} (from ${target.from}) for ` +
      `${settings.durationS} s at ${settings.rate} req/s, ${settings.tokens.min}–` +
      `${settings.tokens.max} tokens, ${settings.binary ? "binary" : "JSON"}; Ctrl-C stops\n`,
  );
  let lastTick = 0;
  const ticker = setInterval(() => {
    lastTick = performance.now();
    write(tty ? `\r\x1b[2K${line()}` : `${line()}\n`);
  }, tty ? 250 : 5000);
  let run: TrafficRun;
  try {
    run = await runTraffic({
      url: target.url,
      model,
      dModel,
      traffic,
      types,
      ...settings,
      ...(settings.shiftEveryS === undefined ? {} : { shiftEveryS: settings.shiftEveryS }),
      fetch: target.fetch,
      signal: abort.signal,
      stats,
    });
  } finally {
    clearInterval(ticker);
    target.fetch.close();
  }
  // The final line, unless a non-terminal just got one.
  if (tty) write(`\r\x1b[2K${line()}\n`);
  else if (performance.now() - lastTick > 1000) write(`${line()}\n`);
  const summary = summarize(run, settings, target.url);
  console.log(values.json ? JSON.stringify(summary) : formatSummary(summary, target.url));
  return 0;
}

async function readModel(dir: string): Promise<{ name?: string; traffic?: DemoTraffic }> {
  try {
    const manifest = ModelManifestSchema.parse(
      JSON.parse(await Deno.readTextFile(join(dir, "moe.json"))),
    );
    const traffic = await loadDemoTraffic(dir);
    return { name: manifest.name, ...(traffic ? { traffic } : {}) };
  } catch {
    return {};
  }
}

function summarize(run: TrafficRun, settings: TrafficSettings, url: string) {
  const { stats, result } = run;
  const round = (value: number) => Number.isNaN(value) ? null : Math.round(value * 10) / 10;
  return {
    url,
    mix: settings.mix,
    rate: settings.rate,
    duration_s: round(result.seconds),
    sent: stats.sent,
    ok: stats.ok,
    shed: stats.shed,
    errors: stats.errors,
    /** Arrivals not sent because --max-outstanding requests were in flight. */
    skipped: result.shed,
    statuses: Object.fromEntries(stats.statuses),
    by_type: Object.fromEntries(stats.byType),
    latency_ms: {
      p50: round(quantile(stats.latencies, 0.5)),
      p90: round(quantile(stats.latencies, 0.9)),
      p99: round(quantile(stats.latencies, 0.99)),
      max: round(quantile(stats.latencies, 1)),
    },
    tokens_per_s: round(stats.okRows / Math.max(result.seconds, 1e-3)),
  };
}

function formatSummary(summary: ReturnType<typeof summarize>, url: string): string {
  const statuses = Object.entries(summary.statuses).map(([s, n]) => `${s}: ${n}`).join(", ");
  const types = Object.entries(summary.by_type)
    .sort((a, b) => b[1] - a[1])
    .map(([type, n]) => `${type} ${n}`)
    .join(", ");
  const l = summary.latency_ms;
  return [
    `Summary: ${summary.duration_s} s of ${summary.mix} traffic at ${summary.rate} req/s`,
    `  sent ${summary.sent}, ok ${summary.ok}, shed ${summary.shed}, errors ${summary.errors}` +
    (summary.skipped ? `, ${summary.skipped} arrivals skipped (too many in flight)` : "") +
    `   (statuses: ${statuses || "none"})`,
    `  latency p50 ${l.p50} ms, p90 ${l.p90} ms, p99 ${l.p99} ms, max ${l.max} ms; ` +
    `${summary.tokens_per_s} tokens/s`,
    `  by request type: ${types || "none"}`,
    `Dashboard: ${url}/dashboard   (expert-load heatmap, plan, alerts)`,
  ].join("\n");
}

Deno.exit(await main());
