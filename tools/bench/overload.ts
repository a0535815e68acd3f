// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:overload [--factor 3] [--duration 40] [--out …]`: goodput under
 * overload measured from outside with `hey` (keep-alive, no retries) against
 * `deno task start` (2 backends, the demo model, README defaults). Step 1: capacity =
 * goodput of a closed loop with `--clients` workers. Step 2: `--factor` × capacity
 * offered open-loop (`hey -q`), with the doctor and the pool's saturation read in the
 * middle. Reports goodput ÷ capacity, every answer by status, and the CPU profile of the
 * run — router, backends, hey and everything else on the machine, in cores — so a miss
 * says where the CPU went.
 */
import { parseCli } from "../cli/cli_args.ts";
import { encodeInferRequest } from "../../shared/infer_request_codec.ts";
import { createRandom } from "../model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../model/traffic.ts";
import { processCpuMs } from "./cpu_time.ts";
import { type HeyResult, runHey } from "./hey_run.ts";
import { resultsHeader } from "./results_header.ts";
import { startStack } from "./faults_stack.ts";

const { values } = parseCli({
  name: "deno task bench:overload",
  summary: "Goodput under N× offered load, measured with hey, and where the CPU went.",
  options: {
    factor: { type: "string", default: "3", value: "<x>", description: "offered load ÷ capacity" },
    duration: { type: "string", default: "40", value: "<s>", description: "seconds of overload" },
    clients: {
      type: "string",
      default: "128",
      value: "<n>",
      description: "closed-loop workers measuring capacity",
    },
    workers: {
      type: "string",
      default: "512",
      value: "<n>",
      description: "hey workers offering the overload",
    },
    out: {
      type: "string",
      default: "docs/results/overload.md",
      value: "<file>",
      description: "where the markdown report goes",
    },
  },
});
const MODEL_DIR = "models/demo";
const factor = Number(values.factor);
const durationS = Number(values.duration);

/** Busy CPU ms of the whole machine so far (/proc/stat: all but idle and iowait). */
function machineBusyMs(): number {
  const [cpu] = Deno.readTextFileSync("/proc/stat").split("\n");
  const ticks = cpu!.trim().split(/\s+/).slice(1).map(Number);
  const busy = ticks.reduce((a, b) => a + b, 0) - ticks[3]! - (ticks[4] ?? 0);
  return busy * 10;
}

const traffic = (await loadDemoTraffic(MODEL_DIR))!;
const manifest = JSON.parse(await Deno.readTextFile(`${MODEL_DIR}/moe.json`));
const { body } = encodeInferRequest(
  demoTokens(traffic, traffic.request_types[0]!, 2, createRandom(7)),
  manifest.d_model,
  { requestType: traffic.request_types[0]! },
);
const bodyFile = await Deno.makeTempFile({ suffix: ".json" });
await Deno.writeFile(bodyFile, typeof body === "string" ? new TextEncoder().encode(body) : body);

const stack = await startStack();
const url = `${stack.routerUrl}/v2/models/${manifest.name}/infer`;
const status = (await stack.status())!;
const routerPid = status.router.pid!;
const backendPids = status.backends.map((b) => b.pid!);
const json = async (path: string) =>
  await (await fetch(`${stack.routerUrl}${path}`, { signal: AbortSignal.timeout(10_000) })).json();

interface CpuProfile {
  routerCores: number;
  backendCores: number;
  heyCores: number;
  otherCores: number;
  machineCores: number;
}

/** Runs `work` and measures cores used by the router, backends, hey and the rest meanwhile. */
async function profiled(
  work: (onHey: (pid: number) => void) => Promise<HeyResult>,
): Promise<{ hey: HeyResult; cpu: CpuProfile }> {
  const started = performance.now();
  const router0 = processCpuMs(routerPid);
  const backends0 = backendPids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
  const machine0 = machineBusyMs();
  const hey = await work(() => {});
  const seconds = (performance.now() - started) / 1000;
  const router = (processCpuMs(routerPid) - router0) / 1000 / seconds;
  const backends = (backendPids.reduce((sum, pid) => sum + processCpuMs(pid), 0) - backends0) /
    1000 / seconds;
  const heyCores = hey.cpuMs / 1000 / seconds;
  const machine = (machineBusyMs() - machine0) / 1000 / seconds;
  return {
    hey,
    cpu: {
      routerCores: router,
      backendCores: backends,
      heyCores,
      otherCores: Math.max(0, machine - router - backends - heyCores),
      machineCores: machine,
    },
  };
}

try {
  // Warm-up, then step 1: capacity, closed loop.
  await runHey({ url, concurrency: 16, durationS: 5, bodyFile });
  const capacity = await profiled(() =>
    runHey({ url, concurrency: Number(values.clients), durationS: 15, bodyFile })
  );
  const capacityPerS = capacity.hey.goodputPerS;
  // Step 2: factor × capacity, open loop: `workers` × q requests/s.
  const workers = Number(values.workers);
  const perWorker = Math.max(0.1, Math.round(10 * factor * capacityPerS / workers) / 10);
  let doctor: unknown = null;
  let poolMid: unknown = null;
  const midRead = (async () => {
    await new Promise((resolve) => setTimeout(resolve, (durationS / 2) * 1000));
    doctor = await json("/api/doctor").catch((error) => ({ error: String(error) }));
    poolMid = (await json("/api/load").catch(() => null))?.pool ?? null;
  })();
  const overload = await profiled(() =>
    runHey({ url, concurrency: workers, ratePerWorker: perWorker, durationS, bodyFile })
  );
  await midRead;
  // Capacity again after the overload: the machine is shared, so the ratio uses the larger.
  const after = await profiled(() =>
    runHey({ url, concurrency: Number(values.clients), durationS: 15, bodyFile })
  );
  const metrics = await (await fetch(`${stack.routerUrl}/metrics`)).text();
  const sheds = [...metrics.matchAll(/^switchyard_router_shed_total\{reason="(\w+)"\} (\d+)/gm)]
    .map((m) => `${m[1]} ${m[2]}`).join(", ");
  await writeReport({
    capacity,
    after,
    overload,
    capacityPerS: Math.max(capacityPerS, after.hey.goodputPerS),
    workers,
    perWorker,
    doctor,
    poolMid,
    sheds,
  });
} finally {
  await stack.stop();
  await Deno.remove(bodyFile);
}

async function writeReport(r: {
  capacity: { hey: HeyResult; cpu: CpuProfile };
  after: { hey: HeyResult; cpu: CpuProfile };
  overload: { hey: HeyResult; cpu: CpuProfile };
  capacityPerS: number;
  workers: number;
  perWorker: number;
  doctor: unknown;
  poolMid: unknown;
  sheds: string;
}) {
  const f = (n: number, d = 1) => n.toFixed(d);
  const ratio = r.overload.hey.goodputPerS / r.capacityPerS;
  const statusText = (h: HeyResult) =>
    Object.entries(h.statuses).map(([code, n]) => `${code}: ${n}`).join(", ") +
    (Object.keys(h.errors).length
      ? `; errors: ${Object.entries(h.errors).map(([m, n]) => `${n} × ${m}`).join("; ")}`
      : "");
  const cpuRow = (name: string, c: CpuProfile) =>
    `| ${name} | ${f(c.routerCores, 2)} (${f(50 * c.routerCores)} %) | ${f(c.backendCores, 2)} | ${
      f(c.heyCores, 2)
    } | ${f(c.otherCores, 2)} | ${f(c.machineCores, 2)} of ${navigator.hardwareConcurrency} |`;
  const doctorCheck = (r.doctor as { checks?: { id: string; answer: string; measured: string }[] })
    .checks?.find((c) => c.id === "utilisation");
  const lines = [
    `# Overload: ${factor}× offered load, measured with hey`,
    "",
    ...await resultsHeader({
      command: `deno task bench:overload --factor ${values.factor} --duration ${values.duration}`,
      notes: [
        "stack: `deno task start` (2 backends, demo model, README defaults, state in memory)",
        "load: `hey` (Go, keep-alive, no retries), one 2-token JSON request body",
        'the machine is shared with other agents\' work: the "other" CPU column is theirs and ours',
      ],
    }),
    "",
    `Capacity (closed loop, ${values.clients} workers, 15 s, before and after the overload; the ratio uses the larger): ${
      f(r.capacity.hey.goodputPerS)
    } and ${f(r.after.hey.goodputPerS)} req/s → **${f(r.capacityPerS)} req/s**`,
    "",
    `Overload: \`${r.overload.hey.command.replace(/-D \S+/, "-D body.json")}\``,
    "",
    "| measure | value |",
    "| --- | ---: |",
    `| offered (hey workers × rate) | ${r.workers} × ${r.perWorker} = ${
      Math.round(r.workers * r.perWorker)
    } req/s |`,
    `| sent (answered + errors) | ${f(r.overload.hey.sentPerS)} req/s |`,
    `| goodput (200 answers) | ${f(r.overload.hey.goodputPerS)} req/s |`,
    `| **goodput ÷ capacity** | **${f(ratio, 3)}** (target ≥ 0.9) |`,
    `| answers | ${statusText(r.overload.hey)} |`,
    `| router sheds by reason (429) | ${r.sheds || "none"} |`,
    `| doctor (mid-run): pool below 70 % of capacity? | ${
      doctorCheck ? `${doctorCheck.answer} — ${doctorCheck.measured}` : "n/a"
    } |`,
    `| pool (mid-run, /api/load) | saturation ${
      (r.poolMid as { saturation?: number } | null)?.saturation ?? "n/a"
    }, router shed ${
      (r.poolMid as { router_shed_s?: number } | null)?.router_shed_s ?? "n/a"
    } req/s |`,
    "",
    "CPU, in cores (the router's share of the 2 cores in brackets):",
    "",
    "| phase | router | backends | hey | other | machine |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    cpuRow("capacity before (closed loop)", r.capacity.cpu),
    cpuRow(`${factor}× overload`, r.overload.cpu),
    cpuRow("capacity after (closed loop)", r.after.cpu),
    "",
  ];
  await Deno.writeTextFile(values.out, lines.join("\n"));
  console.log(lines.join("\n"));
}
