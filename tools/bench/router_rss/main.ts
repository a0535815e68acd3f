// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:router-rss [--quick]`: what the router's resident memory does at
 * 5× its capacity under each candidate setting, side by side in one run (issue 12: RSS at
 * 5× ≤ 2× idle). Two backends and one router per variant (`router_rss/variants.ts`) start
 * together on loopback; capacity is measured once through the first router as the best
 * goodput over several concurrencies (`capacity.ts`); then each router in turn gets the
 * same Poisson offered load while its RSS (`/proc/<pid>/status`), open file descriptors
 * (client and backend connections) and JS heap are sampled. Writes `<out>.json` and
 * `<out>.md` with the command.
 */
import { join } from "node:path";
import { parseCli } from "../../cli/cli_args.ts";
import { loadDemoTraffic } from "../../model/traffic.ts";
import { freePort, type PoolProcess, startProcess } from "../../pool/processes.ts";
import { startBenchBackend } from "../baseline/serving.ts";
import { measureCapacity } from "../capacity.ts";
import { closedLoop, openLoop } from "../load_generator.ts";
import { openFds, rssMiB, scrape, sumSeries } from "../faults_stack.ts";
import { round } from "../stats.ts";
import { processCpuMs } from "../cpu_time.ts";
import { pinTo, splitCpus } from "../pin.ts";
import { prepareWorkload } from "../workload.ts";
import { pickVariants } from "./variants.ts";
import { tallyingFetch } from "../faults_phases.ts";

const { values } = parseCli({
  name: "deno task bench:router-rss",
  summary:
    "Router RSS at a multiple of capacity under several settings (HTTP front and its connection\ncap, allocator arenas, V8 semi-space, max_in_flight, HTTP/2 to backends), side by side:\none router per variant in front of the same two backends. Writes <out>.json and <out>.md.",
  options: {
    variants: {
      type: "string",
      value: "<list>",
      description: "comma-separated variant names (default all; see router_rss/variants.ts)",
    },
    factor: { type: "string", default: "5", value: "<x>", description: "offered load × capacity" },
    seconds: { type: "string", value: "<s>", description: "seconds per variant (default 20)" },
    rate: {
      type: "string",
      value: "<req/s>",
      description: "capacity to use instead of measuring it",
    },
    "model-dir": {
      type: "string",
      default: "models/demo",
      value: "<dir>",
      description: "model directory (the demo model)",
    },
    quick: { type: "boolean", description: "short phases (a smoke run, figures are rough)" },
    pin: {
      type: "boolean",
      description:
        "routers on CPU 0, backends and the load generator on the others (taskset): the router\nwith a core of its own, as on a machine apart from the GPU backends",
    },
    out: {
      type: "string",
      default: "docs/results/router_rss",
      value: "<path>",
      description: "writes <path>.json and <path>.md",
    },
  },
  epilog: ["Run it alone: flock -o /tmp/switchyard-heavy.lock deno task bench:router-rss"],
});
const quick = values.quick === true;
const pin = values.pin === true;
const seconds = Number(values.seconds ?? (quick ? 5 : 20));
const factor = Number(values.factor);
const variants = pickVariants(values.variants);
const modelDir = String(values["model-dir"]);
const command = ["deno task bench:router-rss", ...Deno.args].join(" ");
const log = (line: string) => console.log(`[router-rss] ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TOKEN = `rss-internal-${crypto.randomUUID()}`;

const manifest = JSON.parse(await Deno.readTextFile(join(modelDir, "moe.json")));
const requests = prepareWorkload({
  dModel: manifest.d_model,
  traffic: await loadDemoTraffic(modelDir),
  count: 512,
});
const common = {
  SWITCHYARD_MODEL__DIR: modelDir,
  SWITCHYARD_AUTH__INTERNAL_TOKEN: TOKEN,
  SWITCHYARD_LOG__LEVEL: "warn",
  SWITCHYARD_LOG__REQUESTS: "false",
  SWITCHYARD_LOG__DIR: "",
  SWITCHYARD_STATE__KV: ":memory:",
};
const processes: PoolProcess[] = [];
try {
  log("starting 2 backends …");
  const backends = await Promise.all(
    [1, 2].map((i) => startBenchBackend(common, TOKEN, { SWITCHYARD_BACKEND__ID: `backend-${i}` })),
  );
  processes.push(...backends);
  log(`starting ${variants.length} routers …`);
  const routers = [];
  for (const variant of variants) {
    const port = freePort();
    const router = await startProcess("router/main.ts", {
      url: `http://127.0.0.1:${port}`,
      env: {
        ...common,
        SWITCHYARD_ROUTER__HOST: "127.0.0.1",
        SWITCHYARD_ROUTER__PORT: String(port),
        SWITCHYARD_ROUTER__BACKENDS: JSON.stringify(backends.map((b) => b.url)),
        ...variant.env,
      },
    });
    processes.push(router);
    routers.push({ variant, router, url: `${router.url}/v2/models/${manifest.name}/infer` });
  }
  if (pin) {
    const { first, rest: others } = splitCpus();
    for (const router of routers) await pinTo(router.router.child.pid, first);
    for (const backend of backends) await pinTo(backend.child.pid, others);
    await pinTo(Deno.pid, others);
    log(`pinned: routers on CPU 0, backends and the load generator on CPUs ${others}`);
  }
  for (const { url } of routers) await closedLoop({ url, requests, concurrency: 8, durationS: 3 });
  await sleep(2000);
  const idle = routers.map(({ router }) => rssMiB(router.child.pid));

  const capacity = values.rate !== undefined ? undefined : await measureCapacity({
    url: routers[0]!.url,
    requests,
    seconds: quick ? 3 : 8,
    onRun: (run) => log(`capacity at ${run.concurrency} clients: ${run.goodput_rps} req/s`),
  });
  const capacityRps = values.rate !== undefined ? Number(values.rate) : capacity!.capacity_rps;
  const rate = capacityRps * factor;
  log(`capacity ${capacityRps} req/s; offering ${round(rate, 1)} req/s to each router`);

  const rows = [];
  for (const [i, { variant, router, url }] of routers.entries()) {
    const pid = router.child.pid;
    let maxRss = rssMiB(pid);
    let maxFds = openFds(pid);
    const sampler = setInterval(() => {
      maxRss = Math.max(maxRss, rssMiB(pid) || 0);
      maxFds = Math.max(maxFds, openFds(pid));
    }, 250);
    const tally = { statuses: {}, noHealthyBackend: 0, shedWithoutRetryAfter: 0 };
    const cpu0 = processCpuMs(pid);
    const selfCpu0 = processCpuMs("self");
    const result = await openLoop({
      url,
      requests,
      rate,
      durationS: seconds,
      fetch: tallyingFetch(tally),
      maxOutstanding: variant.maxOutstanding ?? 8192,
      seed: 50,
    });
    clearInterval(sampler);
    // Cores the router and the load generator used while the load ran (of the machine's).
    const routerCores = (processCpuMs(pid) - cpu0) / 1000 / result.seconds;
    const generatorCores = (processCpuMs("self") - selfCpu0) / 1000 / result.seconds;
    const metrics = await scrape(router.url);
    await sleep(3000);
    const row = {
      variant: variant.name,
      what: variant.what,
      env: variant.env,
      idle_rss_mib: round(idle[i]!, 1),
      max_rss_mib: round(maxRss, 1),
      max_over_idle: round(maxRss / idle[i]!, 2),
      rss_3s_after_mib: round(rssMiB(pid), 1),
      heap_used_mib: round(sumSeries(metrics, "switchyard_process_heap_used_bytes") / 2 ** 20, 1),
      max_open_fds: maxFds,
      // What each open descriptor (almost all client connections) costs, on average.
      kib_per_fd_over_idle: round((maxRss - idle[i]!) * 1024 / Math.max(1, maxFds), 1),
      goodput_rps: round(result.ok / result.seconds, 1),
      sent_rps: round(result.sent / result.seconds, 1),
      router_cores: round(routerCores, 2),
      generator_cores: round(generatorCores, 2),
      statuses: tally.statuses,
    };
    rows.push(row);
    log(JSON.stringify(row));
    await sleep(2000);
  }

  const run = {
    command,
    at: new Date().toISOString(),
    model:
      `${manifest.name} (${manifest.layers} layers × ${manifest.experts} experts, d_model ${manifest.d_model}; onnxruntime CPU)`,
    machine: pin
      ? `${navigator.hardwareConcurrency} CPU cores: the routers pinned to CPU 0, the load generator and 2 backends to the others`
      : `${navigator.hardwareConcurrency} CPU cores shared by the load generator, the routers and 2 backends (and other work on this machine)`,
    capacity: capacity ?? { capacity_rps: capacityRps, given: true },
    factor,
    offered_rps: round(rate, 1),
    seconds,
    rows,
  };
  const out = String(values.out);
  await Deno.writeTextFile(`${out}.json`, JSON.stringify(run, null, 2) + "\n");
  const md = [
    `# Router RSS at ${factor}× capacity, side by side (\`bench:router-rss\`)`,
    "",
    `Command: \`flock -o /tmp/switchyard-heavy.lock ${command}\` (raw numbers: \`${out}.json\`)`,
    "",
    `- ${run.at}; ${run.model}; ${run.machine}`,
    `- two backends; one router per variant in front of both; every router warmed up, then idle RSS read; capacity ${capacityRps} req/s (${
      capacity
        ? `best goodput over ${
          capacity.runs.map((r) => `${r.concurrency} clients ${r.goodput_rps}`).join(", ")
        } req/s, through the first router`
        : "given"
    }); then each router in turn: Poisson arrivals at ${
      round(rate, 1)
    } req/s for ${seconds} s (≤ 8,192 outstanding), RSS and open fds sampled every 250 ms`,
    "- the machine was shared with other work: compare rows of this run only",
    "- sent: what the load generator managed to send; router / generator cores: CPU-seconds per second each used while the load ran (from `/proc`)",
    "",
    "| variant | what | idle RSS MiB | max RSS MiB | max ÷ idle | RSS 3 s after | JS heap MiB | max open fds | (max − idle) KiB ÷ fds | sent req/s | goodput req/s | router / generator cores | answers |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ...rows.map((r) =>
      `| ${r.variant} | ${r.what} | ${r.idle_rss_mib} | ${r.max_rss_mib} | ${r.max_over_idle} | ${r.rss_3s_after_mib} | ${r.heap_used_mib} | ${r.max_open_fds} | ${r.kib_per_fd_over_idle} | ${r.sent_rps} | ${r.goodput_rps} | ${r.router_cores} / ${r.generator_cores} | ${
        Object.entries(r.statuses).map(([s, n]) => `${s}: ${n}`).join(", ")
      } |`
    ),
    "",
    "Target (issue 12): max RSS at 5× ≤ 2× idle.",
    "",
  ];
  await Deno.writeTextFile(`${out}.md`, md.join("\n"));
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "-q", `${out}.md`] }).output();
  console.log(md.join("\n"));
} finally {
  await Promise.all(processes.map((p) => p.kill()));
}
Deno.exit(0);
