/**
 * @module The stack `bench:faults` runs against: `deno task start` (the supervised
 * launcher, as a user starts it) on free loopback ports, found through its
 * `--status-file`; and the probes the benchmark reads from outside — the status file
 * (pids, restarts), a process's RSS, the router's readiness details and `/metrics`.
 */
import { freePort, freePorts } from "../pool/processes.ts";
import type { PoolStatus } from "../pool/local_pool.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The status file's contents. */
export type StackStatus = PoolStatus & { launcher: number };

/** A running launcher. */
export interface Stack {
  routerUrl: string;
  /** Base URLs of the backends, in order (backend-1 first). */
  backendUrls: string[];
  internalToken: string;
  status(): Promise<StackStatus | undefined>;
  /** SIGTERM to the launcher (it stops its children), then waits for it. */
  stop(): Promise<number>;
}

/** Options of {@linkcode startStack}. */
export interface StartStackOptions {
  /** `SWITCHYARD_MODEL__DIR`; default the config's (the demo model, generated on first start). */
  modelDir?: string;
  /** Extra `SWITCHYARD_*` env. */
  env?: Record<string, string>;
  /** How long to wait for the pool (default 600 s: the demo model is generated first). */
  timeoutMs?: number;
}

/** Starts `deno task start` with the README's defaults on free ports; resolves when ready. */
export async function startStack(options: StartStackOptions = {}): Promise<Stack> {
  const dir = await Deno.makeTempDir({ prefix: "switchyard-faults-" });
  const statusFile = `${dir}/status.json`;
  const routerPort = freePort();
  const [basePort] = freePorts(2);
  const internalToken = `faults-internal-${crypto.randomUUID()}`;
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    SWITCHYARD_ROUTER__HOST: "127.0.0.1",
    SWITCHYARD_ROUTER__PORT: String(routerPort),
    SWITCHYARD_POOL__BASE_PORT: String(basePort),
    SWITCHYARD_POOL__BACKENDS: "2",
    SWITCHYARD_STATE__KV: ":memory:",
    // No log files in the repository; the lines still go to the (discarded) stdout.
    SWITCHYARD_LOG__DIR: "",
    SWITCHYARD_AUTH__ADMIN_TOKEN: `faults-admin-${crypto.randomUUID()}`,
    SWITCHYARD_AUTH__INTERNAL_TOKEN: internalToken,
    ...(options.modelDir ? { SWITCHYARD_MODEL__DIR: options.modelDir } : {}),
    ...options.env,
  };
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "start", "--status-file", statusFile],
    cwd: ROOT,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const decoder = new TextDecoder();
  const drained = child.stderr.pipeTo(
    new WritableStream({
      write: (chunk) => void (stderr = (stderr + decoder.decode(chunk)).slice(-4000)),
    }),
  );
  let exited = false;
  child.status.then(() => exited = true);
  const status = async () => {
    try {
      return JSON.parse(await Deno.readTextFile(statusFile)) as StackStatus;
    } catch {
      return undefined;
    }
  };
  const routerUrl = `http://127.0.0.1:${routerPort}`;
  const stack: Stack = {
    routerUrl,
    backendUrls: [0, 1].map((i) => `http://127.0.0.1:${basePort! + i}`),
    internalToken,
    status,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      const { code } = await child.status;
      await drained.catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      return code;
    },
  };
  const deadline = Date.now() + (options.timeoutMs ?? 600_000);
  while (Date.now() < deadline) {
    if (exited) throw new Error(`deno task start exited:\n${stderr}`);
    const current = await status();
    if (current?.router.pid && (await routerReady(routerUrl))?.healthy === 2) return stack;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await stack.stop();
  throw new Error(`the stack did not become ready:\n${stderr}`);
}

/** The router's readiness details: healthy count and each backend's health by name. */
export async function routerReady(
  routerUrl: string,
): Promise<{ healthy: number; backends: Map<string, boolean> } | undefined> {
  try {
    const response = await fetch(`${routerUrl}/v2/health/ready`, {
      signal: AbortSignal.timeout(2000),
    });
    const body = await response.json();
    const list = (body.details?.backends ?? []) as { name: string; healthy: boolean }[];
    return {
      healthy: body.details?.healthy_backends ?? 0,
      backends: new Map(list.map((b) => [b.name, b.healthy])),
    };
  } catch {
    return undefined;
  }
}

/** Whether a backend answers its own readiness check (with the internal token). */
export async function backendReady(url: string, token: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/v2/health/ready`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(1000),
    });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/** Resident set size of a process in MiB (`/proc/<pid>/status` VmRSS); NaN when gone. */
export function rssMiB(pid: number): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return kb / 1024;
  } catch {
    return NaN;
  }
}

/** Open file descriptors of a process (`/proc/<pid>/fd`); 0 when gone. */
export function openFds(pid: number): number {
  let n = 0;
  try {
    for (const _ of Deno.readDirSync(`/proc/${pid}/fd`)) n++;
  } catch { /* gone */ }
  return n;
}

/** Samples of `/metrics` by series (`name{labels}`), counters summed by the caller. */
export async function scrape(routerUrl: string): Promise<Map<string, number>> {
  const samples = new Map<string, number>();
  try {
    const text = await (await fetch(`${routerUrl}/metrics`, { signal: AbortSignal.timeout(5000) }))
      .text();
    for (const line of text.split("\n")) {
      if (line === "" || line.startsWith("#")) continue;
      const space = line.lastIndexOf(" ");
      samples.set(line.slice(0, space), Number(line.slice(space + 1)));
    }
  } catch { /* a missed scrape reads as zeros */ }
  return samples;
}

/** The sum of every series of `name` whose labels include `match` (e.g. `cause="timeout"`). */
export function sumSeries(samples: Map<string, number>, name: string, match = ""): number {
  let sum = 0;
  for (const [series, value] of samples) {
    if ((series === name || series.startsWith(`${name}{`)) && series.includes(match)) sum += value;
  }
  return sum;
}
