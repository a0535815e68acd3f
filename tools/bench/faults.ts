// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:faults [--quick] [--out-dir docs/results]`: faults and overload
 * against the real stack on loopback (`deno task start`, found through its status file):
 * capacity through the router, offered load at 1×, 2×, 3× and 5× of it, kill -9 of a
 * backend under 40 req/s, SIGSTOP of a backend for 40 s under 40 req/s. Writes
 * `faults.json` and `faults.md` (the command inside). Benchmarks measure; the targets
 * of issue 12 are judged in the report, not asserted.
 */
import { join } from "node:path";
import { parseCli } from "../cli/cli_args.ts";
import { loadDemoTraffic } from "../model/traffic.ts";
import { closedLoop } from "./load_generator.ts";
import { measureCapacity } from "./capacity.ts";
import { round } from "./stats.ts";
import { pinTo, splitCpus } from "./pin.ts";
import { prepareWorkload } from "./workload.ts";
import { killPhase, type LoadLevel, loadLevel, stopPhase } from "./faults_phases.ts";
import { faultsMarkdown, type FaultsRun } from "./faults_report.ts";
import { rssMiB, startStack } from "./faults_stack.ts";

const { values } = parseCli({
  name: "deno task bench:faults",
  summary:
    "Faults and overload against `deno task start` on loopback: capacity, offered load at\n1×, 2×, 3×, 5× of it, kill -9 and SIGSTOP of a backend under 40 req/s. Writes faults.json\nand faults.md.",
  options: {
    quick: { type: "boolean", description: "short phases (a smoke run, figures are rough)" },
    pin: {
      type: "boolean",
      description:
        "backends (the launcher and what it starts) on CPUs 1…, the router and the load generator\non CPU 0 (taskset): clients and edge apart from the GPU side, as in production",
    },
    "stop-seconds": {
      type: "string",
      value: "<s>",
      description: "how long the backend stays SIGSTOPped (default 40, quick 8)",
    },
    "load-seconds": {
      type: "string",
      value: "<s>",
      description: "seconds per offered-load level (default 20, quick 5)",
    },
    factors: {
      type: "string",
      default: "1,2,3,5",
      value: "<list>",
      description: "offered load levels as multiples of capacity",
    },
    "model-dir": {
      type: "string",
      value: "<dir>",
      description: "model directory (default the config's: the demo model)",
    },
    "from-json": {
      type: "string",
      value: "<file>",
      description: "only re-render faults.md from a faults.json a run wrote (no stack started)",
    },
    "out-dir": {
      type: "string",
      default: "docs/results",
      value: "<dir>",
      description: "where faults.json and faults.md go",
    },
  },
});
const quick = values.quick === true;
const stopSeconds = Number(values["stop-seconds"] ?? (quick ? 8 : 40));
const loadSeconds = Number(values["load-seconds"] ?? (quick ? 5 : 20));
const capacitySeconds = quick ? 3 : 8;
const factors = String(values.factors).split(",").map(Number);
const command = ["deno task bench:faults", ...Deno.args].join(" ");
const log = (line: string) => console.log(`[faults] ${line}`);

/** Writes faults.md for `run` into `outDir`, formatted as the repository's markdown. */
async function writeMarkdown(run: FaultsRun, outDir: string): Promise<void> {
  const path = join(outDir, "faults.md");
  await Deno.writeTextFile(path, faultsMarkdown(run));
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "-q", path] }).output();
}

if (values["from-json"]) {
  const run = JSON.parse(await Deno.readTextFile(values["from-json"])) as FaultsRun;
  await writeMarkdown(run, String(values["out-dir"]));
  log(`re-rendered ${join(String(values["out-dir"]), "faults.md")} from ${values["from-json"]}`);
  Deno.exit(0);
}

const started = new Date().toISOString();
log("starting deno task start …");
const stack = await startStack(values["model-dir"] ? { modelDir: values["model-dir"] } : {});
try {
  const modelDir = values["model-dir"] ?? "models/demo";
  const manifest = JSON.parse(await Deno.readTextFile(join(modelDir, "moe.json")));
  const requests = prepareWorkload({
    dModel: manifest.d_model,
    traffic: await loadDemoTraffic(modelDir),
    count: 512,
  });
  const url = `${stack.routerUrl}/v2/models/${manifest.name}/infer`;
  const routerPid = (await stack.status())!.router.pid!;
  if (values.pin === true) {
    const { first, rest } = splitCpus();
    const current = (await stack.status())!;
    // The launcher first: backends it restarts later inherit its CPUs.
    await pinTo(current.launcher, rest);
    for (const backend of current.backends) if (backend.pid) await pinTo(backend.pid, rest);
    await pinTo(routerPid, first);
    await pinTo(Deno.pid, first);
    log(`pinned: backends on CPUs ${rest}; the router and the load generator on CPU ${first}`);
  }

  log("warm-up …");
  await closedLoop({ url, requests, concurrency: 8, durationS: 3 });
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idleRss = rssMiB(routerPid);
  log(`router RSS idle: ${round(idleRss, 1)} MiB`);

  // Capacity: the best goodput over several client counts (one count under-measures).
  const measured = await measureCapacity({
    url,
    requests,
    seconds: capacitySeconds,
    onRun: (r) => log(`capacity at ${r.concurrency} clients: ${r.goodput_rps} req/s`),
  });
  const capacity = measured.capacity_rps;
  log(`capacity: ${capacity} req/s (best at ${measured.best_concurrency} clients)`);

  const levels: LoadLevel[] = [];
  for (const factor of factors) {
    const level = await loadLevel(stack, {
      url,
      requests,
      capacity,
      factor,
      seconds: loadSeconds,
      idleRss,
    });
    levels.push(level);
    log(`${factor}×: ${JSON.stringify(level)}`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }

  log("kill -9 of backend-1 under 40 req/s …");
  const kill = await killPhase(stack, { url, requests, rate: 40, maxSeconds: 120 });
  log(JSON.stringify(kill));

  log(`SIGSTOP of backend-2 for ${stopSeconds} s under 40 req/s …`);
  const stop = await stopPhase(stack, { url, requests, rate: 40, stopSeconds });
  log(JSON.stringify(stop));

  const status = await stack.status();
  const run: FaultsRun = {
    command,
    started,
    model:
      `${manifest.name} (${manifest.layers} layers × ${manifest.experts} experts, top-${manifest.top_k}, d_model ${manifest.d_model}; onnxruntime CPU)`,
    machine: values.pin === true
      ? `${navigator.hardwareConcurrency} CPU cores: the 2 backends (and the launcher) pinned to CPUs 1…, the router and the load generator to CPU 0`
      : `${navigator.hardwareConcurrency} CPU cores shared by the load generator, the router and 2 backends`,
    capacity_rps: capacity,
    capacity_clients: measured.best_concurrency,
    capacity_runs: measured.runs,
    idle_router_rss_mib: round(idleRss, 1),
    levels,
    kill,
    stop,
    try_timeout_s: 5,
    launcher_restarts: (status?.backends ?? []).reduce((sum, b) => sum + b.restarts, 0) +
      (status?.router.restarts ?? 0),
  };
  const outDir = String(values["out-dir"]);
  await Deno.mkdir(outDir, { recursive: true });
  await Deno.writeTextFile(join(outDir, "faults.json"), JSON.stringify(run, null, 2) + "\n");
  await writeMarkdown(run, outDir);
  log(`wrote ${join(outDir, "faults.json")} and faults.md`);
} finally {
  await stack.stop();
}
