/**
 * @module Test support: `deno task start` as a user runs it, on free ports with the tiny
 * model, its stdout collected, its `--status-file` read back, and a check that no child
 * process outlives it.
 */
import { freePort, freePorts } from "../../tools/pool/processes.ts";
import type { PoolStatus } from "../../tools/pool/local_pool.ts";
import { waitFor } from "./wait_for.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The status file's contents. */
export type LauncherStatus = PoolStatus & { launcher: number };

/** A running `deno task start`. */
export interface Launcher {
  /** The `deno task` process. */
  child: Deno.ChildProcess;
  /** The environment it runs with (ports, tokens, TLS), for CLIs that should find it. */
  env: Record<string, string>;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** The status file, once the pool is up; `undefined` before. */
  status(): Promise<LauncherStatus | undefined>;
  /** Waits until `predicate(status)` holds (default 180 s), returns that status. */
  waitStatus(predicate: (status: LauncherStatus) => boolean): Promise<LauncherStatus>;
  /** Waits until the output matches (default 180 s). */
  waitOutput(pattern: RegExp): Promise<void>;
  /** SIGTERM, then the exit code (SIGKILL after 60 s, which fails the caller's checks). */
  stop(): Promise<number>;
  /** Removes the temporary directory (status file). */
  cleanup(): Promise<void>;
}

/** Options of {@linkcode startLauncher}. */
export interface StartLauncherOptions {
  /** `SWITCHYARD_*` (and other) env on top of the test defaults. */
  env?: Record<string, string>;
  args?: string[];
}

/** Starts `deno task start` with the test defaults: tokens set, KV in memory, no log files. */
export async function startLauncher(options: StartLauncherOptions = {}): Promise<Launcher> {
  const dir = await Deno.makeTempDir({ prefix: "switchyard-launcher-" });
  const statusFile = `${dir}/status.json`;
  const [basePort] = freePorts(2);
  const env = {
    SWITCHYARD_ROUTER__PORT: String(freePort()),
    SWITCHYARD_POOL__BASE_PORT: String(basePort),
    SWITCHYARD_BACKEND__EXECUTORS: "1",
    SWITCHYARD_STATE__KV: ":memory:",
    SWITCHYARD_LOG__DIR: "",
    SWITCHYARD_LOG__LEVEL: "warn",
    // Tokens set, so the launcher writes no files into the repository's data/.
    SWITCHYARD_AUTH__ADMIN_TOKEN: "test-admin-token-0123456789",
    SWITCHYARD_AUTH__INTERNAL_TOKEN: "test-internal-token-0123456789",
    ...options.env,
  };
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "start", "--status-file", statusFile, ...(options.args ?? [])],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const decoder = new TextDecoder();
  const drain = (stream: ReadableStream<Uint8Array>) =>
    stream.pipeTo(new WritableStream({ write: (chunk) => void (text += decoder.decode(chunk)) }));
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  let exited = false;
  child.status.then(() => exited = true);

  // Up to 3 minutes (a first start generates the model), failing at once if it exits.
  const waitUntil = <T>(what: string, check: () => Promise<T | undefined>): Promise<T> =>
    waitFor(what, check, {
      timeoutMs: 180_000,
      intervalMs: 100,
      retryErrors: false,
      stop: () => exited ? `the launcher exited while waiting for ${what}:\n${text}` : undefined,
      detail: () => `\n${text}`,
    });
  const status = async () => {
    try {
      return JSON.parse(await Deno.readTextFile(statusFile)) as LauncherStatus;
    } catch {
      return undefined;
    }
  };
  return {
    child,
    env,
    output: () => text,
    status,
    waitStatus: (predicate) =>
      waitUntil("a status", async () => {
        const current = await status();
        return current !== undefined && predicate(current) ? current : undefined;
      }),
    waitOutput: (pattern) =>
      waitUntil(String(pattern), () => Promise.resolve(pattern.test(text) ? true : undefined))
        .then(() => {}),
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      const { code } = await child.status;
      clearTimeout(timer);
      await drained;
      return code;
    },
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}

/** Whether a process with this pid still runs a Switchyard entry point (or the launcher). */
export async function isRunning(pid: number): Promise<boolean> {
  try {
    const cmdline = await Deno.readTextFile(`/proc/${pid}/cmdline`);
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    // A zombie (state Z) has exited; only its parent has not collected it yet.
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state !== "Z" && /main\.ts|start\.ts/.test(cmdline);
  } catch {
    return false;
  }
}
