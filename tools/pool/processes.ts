/**
 * @module Start real backend and router processes on loopback, wait for readiness,
 * stop them. Each process is the real entry point (`main.ts`). Used by the launcher's
 * tests, the integration tests and the benchmarks.
 */

import type { FetchLike } from "../../router/runtime/fetch_like.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** A child process started for a test. */
export interface PoolProcess {
  url: string;
  child: Deno.ChildProcess;
  /** SIGKILLs the process and waits for it. */
  kill(): Promise<void>;
}

/** A free TCP port on loopback (bound and released; tests accept the tiny race). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** `count` consecutive free TCP ports on loopback (for the launcher's `pool.base_port`). */
export function freePorts(count: number): number[] {
  for (let attempt = 0; attempt < 100; attempt++) {
    const first = freePort();
    if (first + count > 65_535) continue;
    const listeners: Deno.Listener[] = [];
    try {
      for (let i = 0; i < count; i++) {
        listeners.push(Deno.listen({ hostname: "127.0.0.1", port: first + i }));
      }
      return listeners.map((listener) => (listener.addr as Deno.NetAddr).port);
    } catch {
      // one of them is taken: try another range
    } finally {
      for (const listener of listeners) listener.close();
    }
  }
  throw new Error(`Cannot find ${count} consecutive free ports`);
}

/** Options of {@linkcode waitReady}. */
export interface WaitReadyOptions {
  /** Bearer token for the probe (backends with an internal token). */
  token?: string;
  /** Probe transport (default the global `fetch`; HTTPS probes pass a trusting one). */
  fetch?: FetchLike;
  /** How long to wait (default 120 s: a busy 2-core machine loads the demo model slowly). */
  timeoutMs?: number;
}

/**
 * Polls `url/v2/health/ready` until 200; throws if the child exits first or the time is
 * up. The last probe error goes into the message (e.g. a certificate the probe refused).
 */
export async function waitReady(
  url: string,
  child: { status: Promise<unknown> },
  tokenOrOptions?: string | WaitReadyOptions,
): Promise<void> {
  const options = typeof tokenOrOptions === "string"
    ? { token: tokenOrOptions }
    : tokenOrOptions ?? {};
  const probe = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 120_000;
  let exited = false;
  child.status.then(() => exited = true);
  const deadline = Date.now() + timeoutMs;
  let lastProblem = "not listening";
  while (Date.now() < deadline) {
    if (exited) throw new Error(`process for ${url} exited before becoming ready`);
    try {
      const response = await probe(`${url}/v2/health/ready`, {
        headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
        signal: AbortSignal.timeout(5_000),
      });
      await response.body?.cancel();
      if (response.ok) return;
      lastProblem = `answered ${response.status}`;
    } catch (error) {
      lastProblem = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `${url} did not become ready in ${Math.round(timeoutMs / 1000)} s (last probe: ${lastProblem})`,
  );
}

/** Options of {@linkcode spawnEntry}. */
export interface SpawnEntryOptions {
  env: Record<string, string>;
  stdout?: "null" | "inherit" | "piped";
  /** Extra `deno run` flags before the script (e.g. `--cpu-prof`). */
  denoArgs?: string[];
  /** Another checkout to run the script from (default: this repository's root). */
  cwd?: string;
}

/** Spawns `deno run -A <script>` (relative to the repo root) with exactly `env`. */
export function spawnEntry(script: string, options: SpawnEntryOptions): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...(options.denoArgs ?? []), script],
    cwd: options.cwd ?? ROOT,
    env: options.env,
    stdin: "null",
    stdout: options.stdout ?? "null",
    stderr: "inherit",
  }).spawn();
}

/** Starts `script` (relative to the repo root) with env, waits until `/v2/health/ready` is 200. */
export async function startProcess(
  script: string,
  options: {
    url: string;
    env: Record<string, string>;
    token?: string;
    stdout?: "null" | "inherit";
    denoArgs?: string[];
    cwd?: string;
  },
): Promise<PoolProcess> {
  const child = spawnEntry(script, options);
  const process: PoolProcess = {
    url: options.url,
    child,
    async kill() {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await child.status;
    },
  };
  try {
    await waitReady(options.url, child, options.token);
  } catch (error) {
    await process.kill();
    throw error;
  }
  return process;
}

/** Options of {@linkcode startPool}. */
export interface StartPoolOptions {
  modelDir: string;
  backends: number;
  /** Extra `SWITCHYARD_*` env for every process. */
  env?: Record<string, string>;
  /** Executor Workers per backend (default 0: onnxruntime on the backend's main thread). */
  executors?: number;
  /** Extra env for backend `index` only (after `env`). */
  backendEnv?: (index: number) => Record<string, string>;
}

/** A router and its backends, all real processes. */
export interface TestPool {
  router: PoolProcess;
  backends: PoolProcess[];
  token: string;
  /** Kills the router and starts a new one with the same settings and port. */
  restartRouter(): Promise<PoolProcess>;
  /** The router's environment (to start one by hand, e.g. one expected to fail). */
  routerEnv(): Record<string, string>;
  /** Kills backend `index` (SIGKILL) and starts it again with the same id and port. */
  restartBackend(index: number): Promise<PoolProcess>;
  close(): Promise<void>;
}

/** Starts `backends` backend processes and a router in front of them. */
export async function startPool(options: StartPoolOptions): Promise<TestPool> {
  const token = "test-internal-token-0123456789";
  const common = {
    SWITCHYARD_MODEL__DIR: options.modelDir,
    SWITCHYARD_AUTH__INTERNAL_TOKEN: token,
    SWITCHYARD_LOG__LEVEL: "warn",
    SWITCHYARD_STATE__KV: ":memory:",
    // No log files unless a test asks for them (parallel tests would share data/logs).
    SWITCHYARD_LOG__DIR: "",
    // A whole suite in parallel on 2 cores can delay a health answer past the 1 s default;
    // a backend merely slow to answer must not be taken out of a test's pool. A dead one is
    // still found at once (connection refused). Tests of timeouts set their own.
    SWITCHYARD_ROUTER__HEALTH_TIMEOUT: "5s",
    ...options.env,
  };
  const startBackend = (i: number, port: number) =>
    startProcess("gpu-backend/main.ts", {
      url: `http://127.0.0.1:${port}`,
      token,
      env: {
        ...common,
        SWITCHYARD_BACKEND__PORT: String(port),
        SWITCHYARD_BACKEND__ID: `backend-${i + 1}`,
        SWITCHYARD_BACKEND__EXECUTORS: String(options.executors ?? 0),
        ...options.backendEnv?.(i),
      },
    });
  const backends = await Promise.all(
    Array.from({ length: options.backends }, (_, i) => startBackend(i, freePort())),
  );
  const routerPort = freePort();
  const routerEnv = () => ({
    // State in memory: a restarted router keeps steering the same pool (a test may override).
    SWITCHYARD_STATE__POOL_ID: "test-pool",
    ...common,
    SWITCHYARD_ROUTER__HOST: "127.0.0.1",
    SWITCHYARD_ROUTER__PORT: String(routerPort),
    SWITCHYARD_ROUTER__BACKENDS: JSON.stringify(backends.map((b) => b.url)),
    SWITCHYARD_ROUTER__HEALTH_INTERVAL: "200ms",
  });
  const startRouter = () =>
    startProcess("router/main.ts", { url: `http://127.0.0.1:${routerPort}`, env: routerEnv() });
  const router = await startRouter().catch(async (error) => {
    await Promise.all(backends.map((b) => b.kill()));
    throw error;
  });
  const pool: TestPool = {
    router,
    backends,
    token,
    async restartRouter() {
      await pool.router.kill();
      pool.router = await startRouter();
      return pool.router;
    },
    routerEnv,
    async restartBackend(index) {
      const old = backends[index]!;
      await old.kill();
      backends[index] = await startBackend(index, Number(new URL(old.url).port));
      return backends[index]!;
    },
    async close() {
      await Promise.all([pool.router, ...backends].map((p) => p.kill()));
    },
  };
  return pool;
}
