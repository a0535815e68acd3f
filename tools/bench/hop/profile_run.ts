/**
 * @module `bench:hop --profile`: a backend and a router started with `deno run
 * --cpu-prof`, a closed loop through the router, then both stopped with SIGTERM (they
 * write their profiles on exit) and each main thread's CPU split into buckets
 * ({@linkcode SERVING_BUCKETS}). With it: `/proc` CPU per request of each process and the
 * backend's time inside onnxruntime runs (its executor counters).
 */
import { join } from "node:path";
import { freePort, type PoolProcess, startProcess } from "../../pool/processes.ts";
import { cpuMsOf } from "../cpu_time.ts";
import { closedLoop } from "../load_generator.ts";
import type { PreparedRequest } from "../workload.ts";
import { type CpuProfile, SERVING_BUCKETS, splitProfile } from "./profile_split.ts";

/** One process's split. */
export interface ProcessProfile {
  process: "router" | "backend";
  /** `/proc` CPU ms per answered request over the measured loop. */
  cpuMsPerRequest: number;
  /** Backend only: ms inside onnxruntime runs per request (executor counters). */
  ortMsPerRequest?: number;
  /** Main-thread ms per bucket over the whole run, start-up left out. */
  buckets: { name: string; ms: number }[];
}

/** Options of {@linkcode profileServing}. */
export interface ProfileOptions {
  env: Record<string, string>;
  token: string;
  protocol: string;
  modelName: string;
  requests: readonly PreparedRequest[];
  clients: number;
  durationS: number;
}

async function stopForProfile(process: PoolProcess): Promise<void> {
  try {
    process.child.kill("SIGTERM");
  } catch { /* already gone */ }
  await process.child.status;
}

async function readProfile(dir: string): Promise<CpuProfile> {
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.endsWith(".cpuprofile")) {
      return JSON.parse(await Deno.readTextFile(join(dir, entry.name)));
    }
  }
  throw new Error(`Cannot read a CPU profile: none written in ${dir}`);
}

async function executorBusy(url: string, token: string) {
  const response = await fetch(`${url}/v2/health/ready`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const details = (await response.json()).details as { executor: { busyMs: number } };
  return details.executor.busyMs;
}

/** Runs the profiled pair once and returns both splits. */
export async function profileServing(options: ProfileOptions): Promise<ProcessProfile[]> {
  const root = await Deno.makeTempDir({ prefix: "bench-hop-profile-" });
  const dirs = { backend: join(root, "backend"), router: join(root, "router") };
  const backendPort = freePort();
  const backend = await startProcess("gpu-backend/main.ts", {
    url: `http://127.0.0.1:${backendPort}`,
    token: options.token,
    denoArgs: ["--cpu-prof", `--cpu-prof-dir=${dirs.backend}`],
    env: {
      ...options.env,
      SWITCHYARD_BACKEND__PORT: String(backendPort),
      SWITCHYARD_BACKEND__ID: "bench-backend",
      SWITCHYARD_BACKEND__EXECUTION_PROVIDERS: '["cpu"]',
    },
  });
  let router: PoolProcess | undefined;
  try {
    const routerPort = freePort();
    router = await startProcess("router/main.ts", {
      url: `http://127.0.0.1:${routerPort}`,
      denoArgs: ["--cpu-prof", `--cpu-prof-dir=${dirs.router}`],
      env: {
        ...options.env,
        SWITCHYARD_ROUTER__HOST: "127.0.0.1",
        SWITCHYARD_ROUTER__PORT: String(routerPort),
        SWITCHYARD_ROUTER__BACKENDS: JSON.stringify([backend.url]),
        SWITCHYARD_ROUTER__BACKEND_PROTOCOL: options.protocol,
      },
    });
    const url = `${router.url}/v2/models/${options.modelName}/infer`;
    await closedLoop({ url, requests: options.requests, concurrency: 8, durationS: 1 });
    const pids = { backend: backend.child.pid, router: router.child.pid };
    const before = { b: cpuMsOf([pids.backend]), r: cpuMsOf([pids.router]) };
    const busyBefore = await executorBusy(backend.url, options.token);
    const result = await closedLoop({
      url,
      requests: options.requests,
      concurrency: options.clients,
      durationS: options.durationS,
    });
    const ok = Math.max(1, result.ok);
    const busy = await executorBusy(backend.url, options.token) - busyBefore;
    const backendMs = (cpuMsOf([pids.backend]) - before.b) / ok;
    const routerMs = (cpuMsOf([pids.router]) - before.r) / ok;
    await stopForProfile(router);
    await stopForProfile(backend);
    const split = async (dir: string) =>
      splitProfile(await readProfile(dir), SERVING_BUCKETS).filter((b) =>
        !b.name.startsWith("start-up")
      );
    return [
      { process: "router", cpuMsPerRequest: routerMs, buckets: await split(dirs.router) },
      {
        process: "backend",
        cpuMsPerRequest: backendMs,
        ortMsPerRequest: busy / ok,
        buckets: await split(dirs.backend),
      },
    ];
  } finally {
    if (router) await router.kill();
    await backend.kill();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}
