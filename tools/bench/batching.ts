// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:batching`: one backend, several batching policies, several
 * offered loads, all in one run.
 *
 *   Step 1: measure capacity (closed loop, adaptive policy) in requests/s.
 *   Step 2: for each policy, start a fresh backend process, then drive it with open-loop
 *           Poisson arrivals at each fraction of capacity and with a closed loop
 *           (saturation); read the mean formed batch from the backend's counters.
 *   Step 3: write a CSV and print the table and the targets.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { generateModel } from "../model/generate.ts";
import { loadDemoTraffic } from "../model/traffic.ts";
import { freePort, startProcess } from "../pool/processes.ts";
import { meanFormedBatch, readBatchCounters } from "./backend_probe.ts";
import { closedLoop, type LoadResult, openLoop } from "./load_generator.ts";
import { formatTable, round, summarize } from "./stats.ts";
import { prepareWorkload } from "./workload.ts";
import { DEMO_MODEL_OPTION, parseCli } from "../cli/cli_args.ts";

const { values } = parseCli({
  name: "deno task bench:batching",
  summary:
    "One backend, several batching policies, several offered loads (fractions of the measured\ncapacity) and saturation, in one run; writes a CSV.",
  options: {
    model: DEMO_MODEL_OPTION,
    duration: { type: "string", default: "6", value: "<s>", description: "seconds per load point" },
    loads: {
      type: "string",
      default: "0.1,0.3,0.6,0.9,1.2",
      value: "<list>",
      description: "offered loads as fractions of capacity",
    },
    policies: {
      type: "string",
      default: "fixed-1,fixed-2,fixed-4,fixed-8,fixed-16,delay-2ms,adaptive",
      value: "<list>",
      description: "batching policies to compare",
    },
    executors: {
      type: "string",
      default: "1",
      value: "<n>",
      description: "executor Workers of the backend",
    },
    concurrency: {
      type: "string",
      default: "64",
      value: "<n>",
      description: "closed-loop clients for capacity and saturation",
    },
    out: {
      type: "string",
      default: "out/bench-batching.csv",
      value: "<file>",
      description: "CSV to write",
    },
  },
});
const durationS = Number(values.duration);
const loads = values.loads.split(",").map(Number);
const policies = values.policies.split(",");
const token = "bench-internal-token-0123456789";

if (!existsSync(join(values.model, "moe.json"))) await generateModel(values.model, {});
const manifest = JSON.parse(await Deno.readTextFile(join(values.model, "moe.json")));
const auth = { authorization: `Bearer ${token}` };
const requests = prepareWorkload({
  dModel: manifest.d_model,
  traffic: await loadDemoTraffic(values.model),
  headers: auth,
});
const meanRows = requests.reduce((sum, r) => sum + r.rows, 0) / requests.length;

async function withBackend<T>(policy: string, fn: (url: string) => Promise<T>): Promise<T> {
  const port = freePort();
  const backend = await startProcess("gpu-backend/main.ts", {
    url: `http://127.0.0.1:${port}`,
    token,
    env: {
      SWITCHYARD_MODEL__DIR: values.model,
      SWITCHYARD_BACKEND__PORT: String(port),
      SWITCHYARD_BACKEND__EXECUTORS: values.executors,
      SWITCHYARD_BATCHING__POLICY: policy,
      SWITCHYARD_AUTH__INTERNAL_TOKEN: token,
      SWITCHYARD_LOG__LEVEL: "warn",
    },
  });
  try {
    return await fn(backend.url);
  } finally {
    await backend.kill();
  }
}

const inferPath = `/v2/models/${manifest.name}/infer`;
console.log(
  `bench:batching — model ${manifest.name} (${manifest.layers}×${manifest.experts} experts, d_model ${manifest.d_model}), ` +
    `${values.executors} executor(s), mean request ${
      round(meanRows, 1)
    } rows, ${durationS} s per point`,
);

// Step 1: capacity.
const capacity = await withBackend("adaptive", async (url) => {
  await closedLoop({ url: url + inferPath, requests, concurrency: 8, durationS: 1 });
  const run = await closedLoop({
    url: url + inferPath,
    requests,
    concurrency: Number(values.concurrency),
    durationS,
  });
  return run.ok / run.seconds;
});
console.log(`capacity (adaptive, closed loop): ${round(capacity, 1)} req/s`);

// Step 2: every policy at every load.
interface Row {
  policy: string;
  load: string;
  offered: number;
  result: LoadResult;
  meanBatch: number;
}
const rows: Row[] = [];
for (const policy of policies) {
  await withBackend(policy, async (url) => {
    await closedLoop({ url: url + inferPath, requests, concurrency: 8, durationS: 1 });
    const points: { label: string; offered: number; run: () => Promise<LoadResult> }[] = [
      ...loads.map((load) => ({
        label: `${Math.round(load * 100)}%`,
        offered: load * capacity,
        run: () => openLoop({ url: url + inferPath, requests, rate: load * capacity, durationS }),
      })),
      {
        label: "saturated",
        offered: NaN,
        run: () =>
          closedLoop({
            url: url + inferPath,
            requests,
            concurrency: Number(values.concurrency),
            durationS,
          }),
      },
    ];
    for (const point of points) {
      const before = await readBatchCounters(url, auth);
      const result = await point.run();
      const after = await readBatchCounters(url, auth);
      rows.push({
        policy,
        load: point.label,
        offered: point.offered,
        result,
        meanBatch: meanFormedBatch(before, after),
      });
      const s = summarize(result.latencies);
      console.log(
        `  ${policy.padEnd(10)} ${point.label.padStart(9)}: ${
          round(result.rows / result.seconds, 0)
        } rows/s, ` +
          `p50 ${round(s.p50)} ms, p99 ${round(s.p99)} ms, batch ${
            round(meanFormedBatch(before, after))
          }, errors ${result.errors}`,
      );
    }
  });
}

// Step 3: CSV, table, targets.
const header = [
  "policy",
  "offered_load",
  "offered_req_s",
  "achieved_req_s",
  "achieved_rows_s",
  "p50_ms",
  "p95_ms",
  "p99_ms",
  "mean_formed_batch",
  "errors",
  "shed",
];
const table = rows.map(({ policy, load, offered, result, meanBatch }) => {
  const s = summarize(result.latencies);
  return [
    policy,
    load,
    Number.isNaN(offered) ? "" : round(offered, 1),
    round(result.ok / result.seconds, 1),
    round(result.rows / result.seconds, 0),
    round(s.p50),
    round(s.p95),
    round(s.p99),
    round(meanBatch),
    result.errors,
    result.shed,
  ];
});
await Deno.mkdir(dirname(values.out), { recursive: true });
await Deno.writeTextFile(
  values.out,
  [header, ...table].map((row) => row.join(",")).join("\n") + "\n",
);
console.log("\n" + formatTable(header, table));
console.log(`\nwrote ${values.out}`);

const at = (policy: string, load: string) =>
  rows.find((r) => r.policy === policy && r.load === load);
const rowsPerS = (r: Row | undefined) => (r ? r.result.rows / r.result.seconds : NaN);
const p = (r: Row | undefined, q: "p50" | "p99") => (r ? summarize(r.result.latencies)[q] : NaN);
if (policies.includes("adaptive") && policies.includes("fixed-1")) {
  console.log("\nTargets:");
  const sat = rowsPerS(at("adaptive", "saturated")) / rowsPerS(at("fixed-1", "saturated"));
  console.log(`  adaptive saturated throughput / fixed-1: ${round(sat)}× (target ≥ 3×)`);
  for (const load of [...loads.map((l) => `${Math.round(l * 100)}%`), "saturated"]) {
    const others = rows.filter((r) => r.load === load && r.policy !== "adaptive");
    const bestP99 = Math.min(...others.map((r) => p(r, "p99")));
    const bestTput = Math.max(...others.map(rowsPerS));
    const a = at("adaptive", load);
    console.log(
      `  ${load.padStart(9)}: adaptive p99 / best static p99 = ${
        round(p(a, "p99") / bestP99)
      } (≤ 1.2), ` +
        `throughput / best = ${round(rowsPerS(a) / bestTput)} (≥ 0.9)`,
    );
  }
  const low = `${Math.round(loads[0]! * 100)}%`;
  console.log(
    `  lowest load p50 adaptive / fixed-1: ${
      round(p(at("adaptive", low), "p50") / p(at("fixed-1", low), "p50"))
    } (≤ 1.2)`,
  );
}
