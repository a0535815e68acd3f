// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:observability`: what per-expert metrics and request logs cost
 * at saturation. One run, same pool size and workload, alternating the two settings
 * (off, on, off, on, … so machine drift hits both alike):
 *
 * - off: `metrics.expert_detail=backend` (per-layer series only), `log.requests=false`,
 *   no log files; nobody scrapes.
 * - on: `metrics.expert_detail=expert` (layer × expert series), `log.requests=true`,
 *   rotating log files, and `/metrics` of the router and every backend scraped once a
 *   second (as Prometheus would).
 *
 * Reports tokens/s per round and the on ÷ off ratio of the medians (target ≥ 0.98).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { generateModel } from "../model/generate.ts";
import { loadDemoTraffic } from "../model/traffic.ts";
import { startPool } from "../pool/processes.ts";
import { closedLoop } from "./load_generator.ts";
import { formatTable, quantile, round } from "./stats.ts";
import { prepareWorkload } from "./workload.ts";
import { DEMO_MODEL_OPTION, parseCli } from "../cli/cli_args.ts";

const { values } = parseCli({
  name: "deno task bench:observability",
  summary:
    "What per-expert metrics and request logs cost at saturation: alternating rounds with them\noff and on (scraped once a second); the on ÷ off tokens/s ratio.",
  options: {
    model: DEMO_MODEL_OPTION,
    backends: { type: "string", default: "2", value: "<n>", description: "backend processes" },
    duration: { type: "string", default: "10", value: "<s>", description: "seconds per round" },
    rounds: { type: "string", default: "3", value: "<n>", description: "off/on round pairs" },
    concurrency: {
      type: "string",
      default: "32",
      value: "<n>",
      description: "closed-loop clients",
    },
  },
});
const modelDir = values.model!;
if (!existsSync(join(modelDir, "moe.json"))) await generateModel(modelDir, {});
const manifest = JSON.parse(await Deno.readTextFile(join(modelDir, "moe.json")));
const requests = prepareWorkload({
  dModel: manifest.d_model,
  traffic: await loadDemoTraffic(modelDir),
  zipf: 1.2,
});
const durationS = Number(values.duration);
const logDir = await Deno.makeTempDir({ prefix: "switchyard-bench-logs-" });

/** Scrapes every `/metrics` once a second until `stop`; returns scrapes and bytes. */
async function scrape(urls: string[], token: string, stop: Promise<unknown>) {
  let done = false;
  void stop.finally(() => done = true);
  let scrapes = 0;
  let bytes = 0;
  while (!done) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const url of urls) {
      const response = await fetch(`${url}/metrics`, {
        headers: { authorization: `Bearer ${token}` },
      });
      bytes += (await response.arrayBuffer()).byteLength;
      scrapes++;
    }
  }
  return { scrapes, bytes };
}

async function measure(on: boolean) {
  const pool = await startPool({
    modelDir,
    backends: Number(values.backends),
    executors: 1,
    env: on
      ? {
        SWITCHYARD_METRICS__EXPERT_DETAIL: "expert",
        SWITCHYARD_LOG__REQUESTS: "true",
        SWITCHYARD_LOG__DIR: logDir,
      }
      : {
        SWITCHYARD_METRICS__EXPERT_DETAIL: "backend",
        SWITCHYARD_LOG__REQUESTS: "false",
        SWITCHYARD_LOG__DIR: "",
      },
  });
  try {
    const url = pool.router.url + `/v2/models/${manifest.name}/infer`;
    await closedLoop({ url, requests, concurrency: 8, durationS: 2 }); // warm-up
    const load = closedLoop({
      url,
      requests,
      concurrency: Number(values.concurrency),
      durationS,
    });
    const scraped = on
      ? await scrape([pool.router.url, ...pool.backends.map((b) => b.url)], pool.token, load)
      : { scrapes: 0, bytes: 0 };
    const result = await load;
    return { tokensPerS: result.rows / result.seconds, errors: result.errors, ...scraped };
  } finally {
    await pool.close();
  }
}

console.log(
  `bench:observability — ${manifest.name}, ${values.backends} backends × 1 executor, closed loop ` +
    `${values.concurrency} clients × ${durationS} s per round, ${values.rounds} rounds each`,
);
const rows: (string | number)[][] = [];
const tokens = { off: [] as number[], on: [] as number[] };
for (let round_ = 0; round_ < Number(values.rounds); round_++) {
  for (const on of [false, true]) {
    const result = await measure(on);
    tokens[on ? "on" : "off"].push(result.tokensPerS);
    rows.push([
      round_ + 1,
      on ? "on" : "off",
      round(result.tokensPerS, 0),
      result.errors,
      result.scrapes,
      result.bytes,
    ]);
  }
}
console.log(
  "\n" + formatTable(["round", "observability", "tokens_s", "errors", "scrapes", "bytes"], rows),
);
const off = quantile(tokens.off, 0.5);
const on = quantile(tokens.on, 0.5);
console.log(
  `\nmedian tokens/s: off ${round(off, 0)}, on ${round(on, 0)} → on ÷ off ${round(on / off, 3)}`,
);
await Deno.remove(logDir, { recursive: true });
Deno.exit(0);
