// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:saturation`: what the doctor, the scaler and the alerts say on
 * a steady pool and under 3× overload — the rules before the load signal (computed from
 * the same measurements: executor time only) next to the load signal's, in one run.
 *
 *   Step 1: a pool; closed loop at `--concurrency` → the saturation request rate R.
 *   Step 2: a fresh pool, steady open loop at `--steady` × R for `--duration` s; near the
 *           end read `/api/load`, `/api/doctor`, `/api/alerts`, `/api/advice` and two
 *           backend load reports (the old hot-expert rule).
 *   Step 3: a fresh pool (so the doctor's 10-minute window holds only this phase), open
 *           loop at 3 × the steady rate, same reads.
 * Writes a markdown result with the command line (default docs/results/saturation.md).
 */
import { join } from "node:path";
import { loadDemoTraffic } from "../../model/traffic.ts";
import { benchModelDir } from "../bench_model.ts";
import { startPool, type TestPool } from "../../pool/processes.ts";
import { closedLoop, type LoadResult, openLoop } from "../load_generator.ts";
import { formatTable, round, summarize } from "../stats.ts";
import { prepareWorkload } from "../workload.ts";
import { parseCli } from "../../cli/cli_args.ts";
import { oldDoctorUtilisation, oldHottestShare, oldScaler } from "./old_rules.ts";
import { json } from "../http_probe.ts";

const { values } = parseCli({
  name: "deno task bench:saturation",
  summary: "Doctor, scaler and alerts on a steady pool and under 3× overload: the rules on\n" +
    "executor time alone next to the load signal (saturation), same run, same skewed traffic.",
  options: {
    backends: { type: "string", default: "2", value: "<n>", description: "backend processes" },
    duration: {
      type: "string",
      default: "75",
      value: "<s>",
      description: "seconds per phase (the doctor needs 60 s of traffic)",
    },
    steady: {
      type: "string",
      default: "0.5",
      value: "<share>",
      description: "steady rate as a share of the measured saturation rate",
    },
    concurrency: {
      type: "string",
      default: "32",
      value: "<n>",
      description: "closed-loop clients when measuring the saturation rate",
    },
    zipf: { type: "string", default: "1.2", value: "<s>", description: "Zipf over request types" },
    out: {
      type: "string",
      default: "docs/results/saturation.md",
      value: "<file>",
      description: "markdown result to write",
    },
  },
});
const backends = Number(values.backends);
const durationS = Number(values.duration);
const modelDir = await benchModelDir({ dir: undefined, simulated: false, experts: 0, topK: 0 });
const manifest = JSON.parse(await Deno.readTextFile(join(modelDir, "moe.json")));
const requests = prepareWorkload({
  dModel: manifest.d_model,
  traffic: await loadDemoTraffic(modelDir),
  zipf: Number(values.zipf),
});
const path = `/v2/models/${manifest.name}/infer`;

function pool(): Promise<TestPool> {
  return startPool({
    modelDir,
    backends,
    env: { SWITCHYARD_LOG__REQUESTS: "false", SWITCHYARD_STATE__KV: ":memory:" },
  });
}

interface Reading {
  load: {
    pool: {
      saturation: number | null;
      scale: { backends: number; recommended: number; reason: string } | null;
    };
    backends: {
      name: string;
      utilisation: number | null;
      tokens_s: number | null;
      stale: boolean;
      saturation: { value: number; bottleneck: string } | null;
    }[];
  };
  doctor: { verdict: string; checks: { id: string; answer: string; measured: string }[] };
  alerts: string[];
  oldHottest: number;
  scaling: { recommended: boolean; expected_effect: string } | undefined;
}

async function read(p: TestPool): Promise<Reading> {
  const auth = { authorization: `Bearer ${p.token}` };
  const reports = async () =>
    await Promise.all(p.backends.map((b) => json(`${b.url}/v2/load`, auth)));
  const first = await reports();
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const second = await reports();
  const url = p.router.url;
  const [load, doctor, alerts, advice] = await Promise.all([
    json(`${url}/api/load`),
    json(`${url}/api/doctor`),
    json(`${url}/api/alerts`),
    json(`${url}/api/advice?refresh=1`),
  ]);
  return {
    load,
    doctor,
    alerts: [...new Set((alerts.active as { kind: string }[]).map((a) => a.kind))].sort(),
    oldHottest: Math.max(...second.map((r, i) => oldHottestShare(first[i], r))),
    scaling: advice.advice.find((a: { id: string }) => a.id === "scaling"),
  };
}

/** Runs one phase on a fresh pool; reads everything 10 s before its end. */
async function phase(rate: number): Promise<{ reading: Reading; result: LoadResult }> {
  const p = await pool();
  try {
    const traffic = openLoop({ url: p.router.url + path, requests, rate, durationS });
    await new Promise((resolve) => setTimeout(resolve, (durationS - 10) * 1000));
    const reading = await read(p);
    return { reading, result: await traffic };
  } finally {
    await p.close();
  }
}

console.log(`bench:saturation — ${backends} backends, model ${manifest.name}, Zipf ${values.zipf}`);
// Step 1: the saturation rate.
const calibration = await pool();
let saturatedRate: number;
try {
  const sat = await closedLoop({
    url: calibration.router.url + path,
    requests,
    concurrency: Number(values.concurrency),
    durationS: 15,
  });
  saturatedRate = sat.ok / sat.seconds;
} finally {
  await calibration.close();
}
const steadyRate = Number(values.steady) * saturatedRate;
console.log(
  `saturation rate ${round(saturatedRate, 1)} req/s; steady ${round(steadyRate, 1)}, ` +
    `overload ${round(3 * steadyRate, 1)} req/s`,
);
// Steps 2 and 3.
const steady = await phase(steadyRate);
const overload = await phase(3 * steadyRate);

function column(name: string, { reading, result }: { reading: Reading; result: LoadResult }) {
  const { load, doctor } = reading;
  const oldDoc = oldDoctorUtilisation(load.backends);
  const oldScale = oldScaler(load.backends);
  const check = doctor.checks.find((c) => c.id === "utilisation");
  const lat = summarize(result.latencies);
  const refused = Object.entries(result.errorKinds).map(([k, v]) => `${k}×${v}`).join(" ") || "0";
  const bottlenecks = load.backends.filter((b) => b.saturation).map((b) =>
    `${round(b.saturation!.value, 2)} (${b.saturation!.bottleneck})`
  ).join(", ");
  return [
    name,
    `${
      round(result.sent / result.seconds, 1)
    } req/s offered; ok ${result.ok}, refused ${refused}; ` +
    `p50 ${round(lat.p50, 0)} ms, p99 ${round(lat.p99, 0)} ms`,
    `executor busy ${oldDoc.value === null ? "n/a" : Math.round(oldDoc.value * 100) + " %"} → ` +
    `"below 70 %?" ${oldDoc.answer}`,
    `${check?.answer ?? "?"} — ${check?.measured ?? "?"}; verdict ${doctor.verdict}`,
    `capacity ${oldScale.capacity === null ? "n/a" : round(oldScale.capacity, 0)} tok/s → ` +
    `${oldScale.backends} → ${oldScale.target ?? "n/a"} backends`,
    `saturation ${load.pool.saturation === null ? "n/a" : round(load.pool.saturation, 2)} ` +
    `[${bottlenecks}] → ${load.pool.scale?.backends ?? "?"} → ${
      load.pool.scale?.recommended ?? "?"
    } backends`,
    `hottest expert ${round(reading.oldHottest, 4)} of its executor → ` +
    `${reading.oldHottest > 0.8 ? "expert_hot" : "silent"}`,
    reading.alerts.length === 0 ? "silent" : reading.alerts.join(", "),
  ];
}

const header = [
  "phase",
  "traffic",
  "doctor before (executor time)",
  "doctor after (load signal)",
  "scaler before",
  "scaler after",
  "hot-expert alert before",
  "alerts after",
];
const rows = [column("steady", steady), column("3× overload", overload)];
console.log("\n" + formatTable(header, rows));
const command = `deno task bench:saturation ${Deno.args.join(" ")}`.trim();
const transpose = header.slice(1).map((h, i) =>
  `| ${h} | ${rows[0]![i + 1]} | ${rows[1]![i + 1]} |`
);
const markdown = [
  "# Doctor, scaler and alerts: steady vs 3× overload",
  "",
  `Command: \`${command}\` (${new Date().toISOString()}, ${Deno.build.os}/${Deno.build.arch}, ` +
  `${navigator.hardwareConcurrency} cores shared with other work).`,
  "",
  `${backends} backends, model \`${manifest.name}\`, Zipf ${values.zipf} request types. ` +
  `Measured saturation rate ${round(saturatedRate, 1)} req/s (closed loop, ${values.concurrency} ` +
  `clients); steady = ${values.steady} × that, overload = 3 × steady; ${durationS} s per phase on ` +
  'a fresh pool each, read 10 s before the phase ends. "Before" = the rules on executor time ' +
  "alone, computed by `tools/bench/saturation/old_rules.ts` from the same measurements; " +
  '"after" = what the router answers.',
  "",
  "| | steady | 3× overload |",
  "| --- | --- | --- |",
  ...transpose,
  "",
].join("\n");
await Deno.mkdir(values.out.split("/").slice(0, -1).join("/") || ".", { recursive: true });
await Deno.writeTextFile(values.out, markdown);
console.log(`\nwrote ${values.out}`);
Deno.exit(0);
