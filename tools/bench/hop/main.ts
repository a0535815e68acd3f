// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:hop`: the router → backend hop, side by side in one run.
 *
 *   Step 1: one backend process (the default execution) and one router per hop protocol
 *           in front of it (`router.backend_protocol`: HTTP/1.1 keep-alive, HTTP/2 h2c), for
 *           each HTTP front (`router.http_server`: node:http, Deno.serve; `--fronts`);
 *           with `--compare-ref REF` also the router of git commit REF (its files from
 *           `git archive`, this checkout's node_modules) — before vs after in one run.
 *   Step 2: closed loop, per request size, on the backend directly and through each
 *           router, in rounds whose order rotates (so drift on a shared machine spreads
 *           over all targets): tokens/s, tokens per server CPU-second (`/proc/<pid>/stat`
 *           of backend + that router), router and backend CPU ms per request, p50/p99.
 *   Step 3: the codec steps in this process (binary decode before/now, the router's
 *           check vs a full decode, JSON vs binary output encoding), µs per request.
 *   Step 4 (`--profile`): a fresh backend and router (the better protocol) under
 *           `--cpu-prof`, the demo mix through the router, each main thread's CPU split
 *           into buckets, with `/proc` CPU and onnxruntime time per request.
 *
 * `--out PREFIX` writes PREFIX.json (every figure) and PREFIX.md (the report).
 */
import type { PoolProcess } from "../../pool/processes.ts";
import { benchEnv, startBenchBackend, startBenchRouter } from "../baseline/serving.ts";
import { DEMO_MODEL_OPTION, parseCli } from "../../cli/cli_args.ts";
import { join } from "node:path";
import { computeLimit } from "../compute_limit.ts";
import { BENCH_TOKEN, benchModel } from "../baseline/bench_model.ts";
import { cpuMsOf } from "../cpu_time.ts";
import { closedLoop } from "../load_generator.ts";
import { measureCodecCosts } from "./codec_costs.ts";
import {
  bestProtocol,
  formatHopReport,
  type HopCell,
  type HopReport,
  tokensPerCpuS,
} from "./report.ts";
import { type ProcessProfile, profileServing } from "./profile_run.ts";

const { values } = parseCli({
  name: "deno task bench:hop",
  summary:
    "The router → backend hop in one run: HTTP/1.1 keep-alive vs HTTP/2 (h2c), on each router HTTP\nfront (node:http, Deno.serve), against the backend called directly (CPU per request from\n/proc), plus the codec steps' costs in process.",
  options: {
    model: DEMO_MODEL_OPTION,
    duration: {
      type: "string",
      default: "4",
      value: "<s>",
      description: "seconds per closed-loop phase",
    },
    rounds: {
      type: "string",
      default: "3",
      value: "<n>",
      description: "rounds over all targets (order rotates)",
    },
    clients: { type: "string", default: "32", value: "<n>", description: "closed-loop clients" },
    sizes: {
      type: "string",
      default: "demo,32",
      value: "<list>",
      description: "request sizes: demo (the 1–6 token mix) or a token count",
    },
    fronts: {
      type: "string",
      default: "node,deno",
      value: "<list>",
      description: "router HTTP fronts (router.http_server), each with both hop protocols",
    },
    "compare-ref": {
      type: "string",
      value: "<git ref>",
      description: "also run the router of this commit (HTTP/1.1) as a target",
    },
    profile: {
      type: "boolean",
      default: false,
      description: "also profile router and backend (deno --cpu-prof) at the demo mix",
    },
    out: {
      type: "string",
      value: "<prefix>",
      description: "also write PREFIX.json and PREFIX.md",
    },
  },
});
const durationS = Number(values.duration);
const rounds = Number(values.rounds);
const clients = Number(values.clients);
const token = BENCH_TOKEN;
const { manifest, workloads } = await benchModel(values.model, values.sizes);

// Step 1: the limit (for "% of limit"), then the processes.
const { tokensPerS: limit } = await computeLimit(values.model, manifest);
const common = benchEnv(values.model, token);
const processes: PoolProcess[] = [];
const backend = await startBenchBackend(common, token);
processes.push(backend);
const PROTOCOLS = [["http1", "HTTP/1.1 keep-alive"], ["http2", "HTTP/2 (h2c)"]] as const;
const FRONT_NAMES: Record<string, string> = { node: "node:http", deno: "Deno.serve" };
const fronts = String(values.fronts).split(",").map((front) => front.trim());
for (const front of fronts) {
  if (FRONT_NAMES[front] === undefined) {
    throw new Error(`--fronts: unknown front "${front}" (node, deno)`);
  }
}
const targets: { name: string; url: string; routerPid?: number }[] = [
  { name: "backend direct", url: backend.url },
];
let checkout: string | undefined;
try {
  if (values["compare-ref"]) {
    const ref = values["compare-ref"];
    checkout = await archiveCheckout(ref);
    const router = await startBenchRouter(common, backend.url, {}, checkout);
    processes.push(router);
    targets.push({
      name: `before: router of ${ref}, HTTP/1.1`,
      url: router.url,
      routerPid: router.child.pid,
    });
  }
  for (const front of fronts) {
    for (const [protocol, hop] of PROTOCOLS) {
      const router = await startBenchRouter(common, backend.url, {
        SWITCHYARD_ROUTER__BACKEND_PROTOCOL: protocol,
        SWITCHYARD_ROUTER__HTTP_SERVER: front,
      });
      processes.push(router);
      const name = `via router (${FRONT_NAMES[front]}), ${hop}`;
      targets.push({ name, url: router.url, routerPid: router.child.pid });
    }
  }

  // Step 2: rounds over targets × sizes.
  const path = `/v2/models/${manifest.name}/infer`;
  const backendPid = backend.child.pid;
  const cells = new Map<string, HopCell>();
  for (const target of targets) {
    await closedLoop({
      url: target.url + path,
      requests: workloads[0]!.requests,
      concurrency: 8,
      durationS: 1,
    });
  }
  for (let round = 0; round < rounds; round++) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
    for (const { size, requests } of workloads) {
      for (const target of order) {
        console.error(`round ${round + 1}/${rounds}: ${target.name}, ${size}`);
        const routerPids = target.routerPid === undefined ? [] : [target.routerPid];
        const backendBefore = cpuMsOf([backendPid]);
        const routerBefore = cpuMsOf(routerPids);
        const result = await closedLoop({
          url: target.url + path,
          requests,
          concurrency: clients,
          durationS,
        });
        const key = `${target.name}|${size}`;
        const cell = cells.get(key) ??
          {
            target: target.name,
            size,
            ok: 0,
            errors: 0,
            rows: 0,
            seconds: 0,
            backendCpuMs: 0,
            routerCpuMs: 0,
            latencies: [],
          };
        cell.ok += result.ok;
        cell.errors += result.errors;
        cell.rows += result.rows;
        cell.seconds += result.seconds;
        cell.backendCpuMs += cpuMsOf([backendPid]) - backendBefore;
        cell.routerCpuMs += cpuMsOf(routerPids) - routerBefore;
        cell.latencies.push(...result.latencies);
        cells.set(key, cell);
      }
    }
  }

  // Step 3: the codec steps in process.
  console.error("codec steps in process");
  const codec = measureCodecCosts(workloads[0]!.requests, {
    name: manifest.name,
    dModel: manifest.d_model,
    layers: manifest.layers,
    topK: manifest.top_k,
  });

  // Step 4: where the CPU goes, per process (the protocol with more tokens per CPU-second
  // at the first size).
  let profiles: ProcessProfile[] | undefined;
  if (values.profile) {
    const protocol =
      bestProtocol([...cells.values()], tokensPerCpuS).get(workloads[0]!.size)?.includes("HTTP/2")
        ? "http2"
        : "http1";
    console.error(`profiling router (${protocol}) and backend`);
    profiles = await profileServing({
      env: common,
      token,
      protocol,
      modelName: manifest.name,
      requests: workloads[0]!.requests,
      clients,
      durationS: durationS * 2,
    });
  }

  const report: HopReport = {
    command: `deno task bench:hop ${Deno.args.join(" ")}`.trim(),
    model:
      `${manifest.name}: ${manifest.layers} layers × ${manifest.experts} experts, top-${manifest.top_k}, d_model ${manifest.d_model}, d_ff ${manifest.d_ff}`,
    cores: navigator.hardwareConcurrency,
    clients,
    durationS,
    rounds,
    limitTokensPerS: limit,
    cells: [...cells.values()],
    codec,
    ...(profiles ? { profiles } : {}),
  };
  const text = formatHopReport(report);
  console.log(text);
  if (values.out) {
    const { cells: all, ...rest } = report;
    await Deno.writeTextFile(
      `${values.out}.json`,
      JSON.stringify(
        { ...rest, cells: all.map(({ latencies: _latencies, ...cell }) => cell) },
        null,
        2,
      ) + "\n",
    );
    await Deno.writeTextFile(`${values.out}.md`, text + "\n");
  }
} finally {
  for (const process of processes.reverse()) await process.kill();
  if (checkout) await Deno.remove(checkout, { recursive: true }).catch(() => {});
}
Deno.exit(0);

/** The files of commit `ref` in a temporary directory, with this checkout's node_modules. */
async function archiveCheckout(ref: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "bench-hop-ref-" });
  const root = new URL("../../../", import.meta.url).pathname;
  const archive = await new Deno.Command("git", {
    args: ["archive", "--format=tar", ref],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!archive.success) {
    throw new Error(`Cannot archive ${ref}: ${new TextDecoder().decode(archive.stderr).trim()}`);
  }
  const tar = new Deno.Command("tar", { args: ["-x", "-C", dir], stdin: "piped" }).spawn();
  const writer = tar.stdin.getWriter();
  await writer.write(archive.stdout);
  await writer.close();
  if (!(await tar.status).success) throw new Error(`Cannot unpack ${ref} into ${dir}`);
  await Deno.symlink(join(root, "node_modules"), join(dir, "node_modules"));
  return dir;
}
