/**
 * @module The supervised local pool behind `deno task start`: N backends and the router
 * as child processes on loopback, each kept alive by a {@linkcode Supervisor} (restart
 * with backoff, counted and logged; one child's exit never stops the others).
 *
 * Step 1: backends start in parallel; a line per backend when its model is loaded, and a
 * "still loading" line every few seconds until all are. Step 2: the router, probed over
 * its public URL (HTTPS probes trust `router.tls.ca` or the certificate itself). A child
 * that cannot start the first time stops the pool: that is a configuration problem. `stop()`
 * works at any moment, also while the pool starts (Ctrl-C during a slow model load leaves
 * no child behind).
 */
import type { Config } from "../../shared/config.ts";
import { routerTrust, routerUrl } from "../client/router_address.ts";
import { createTrustedFetch, type TrustedFetch } from "../client/trusted_fetch.ts";
import { serveLauncherControl } from "./launcher_control.ts";
import { spawnEntry, waitReady } from "./processes.ts";
import { ScalableBackends } from "./scalable_backends.ts";
import { childHandle, Supervisor } from "./supervisor.ts";

/** One child as the launcher reports it. */
export interface ChildStatus {
  name: string;
  url: string;
  /** `null` between a crash and the restart. */
  pid: number | null;
  restarts: number;
}

/** What runs where (the `--status-file` contents). */
export interface PoolStatus {
  router: ChildStatus;
  backends: ChildStatus[];
}

/** Options of {@linkcode createLocalPool}. */
export interface LocalPoolOptions {
  config: Config;
  /** Environment of every child (config path, internal token). */
  env: Record<string, string>;
  internalToken: string;
  /** Given to the router only. */
  adminToken: string;
  /** Progress and supervision lines. */
  log(line: string): void;
  /** Called whenever a pid or a restart count changes. */
  onChange?(status: PoolStatus): void;
  /** Seconds between "still loading" lines (default 5). */
  progressEveryS?: number;
  /** Bench/test option: wait this long before spawning each backend started on request (ms). */
  injectedColdStartMs?: number;
}

/** A supervised pool: `start()` once; `stop()` at any time, also while it starts. */
export interface LocalPool {
  routerUrl: string;
  /** Resolves when every child is ready; rejects (nothing left running) if one is not. */
  start(): Promise<void>;
  status(): PoolStatus;
  /** Stops supervising and ends every child (router first); idempotent. */
  stop(): Promise<void>;
}

/** The pool of `options`; nothing runs until `start()`. */
export function createLocalPool(options: LocalPoolOptions): LocalPool {
  const { config, log } = options;
  const backendUrls = Array.from(
    { length: config.pool.backends },
    (_, i) => `http://127.0.0.1:${config.pool.base_port + i}`,
  );
  const url = routerUrl(config);
  let probe: TrustedFetch | undefined;
  let stopped = false;
  const backends: { supervisor: Supervisor; url: string }[] = [];
  let router: { supervisor: Supervisor; url: string } | undefined;
  // The local scaler's backends and the control API it reaches them through.
  const scalable = config.prewarm.scaler === "local"
    ? new ScalableBackends({
      basePort: config.pool.base_port + config.pool.backends,
      spawn: (name, port) =>
        childHandle(spawnEntry("gpu-backend/main.ts", {
          env: {
            ...options.env,
            SWITCHYARD_BACKEND__HOST: "127.0.0.1",
            SWITCHYARD_BACKEND__PORT: String(port),
            SWITCHYARD_BACKEND__ID: name,
          },
          stdout: "inherit",
        })),
      ready: (backendUrl, child) => waitReady(backendUrl, child, { token: options.internalToken }),
      log,
      onChange: () => options.onChange?.(status()),
      ...(options.injectedColdStartMs === undefined
        ? {}
        : { injectedColdStartMs: options.injectedColdStartMs }),
    })
    : undefined;
  let control: { url: string; close(): Promise<void> } | undefined;
  const describe = ({ supervisor, url }: { supervisor: Supervisor; url: string }) => ({
    name: supervisor.name,
    url,
    pid: supervisor.pid ?? null,
    restarts: supervisor.restarts,
  });
  const status = (): PoolStatus => ({
    router: router ? describe(router) : { name: "router", url, pid: null, restarts: 0 },
    backends: [
      ...backends.map(describe),
      ...(scalable?.supervisors().filter((s) => !backends.some((b) => b.url === s.url)) ?? [])
        .map(describe),
    ],
  });
  const supervise = (
    name: string,
    script: string,
    childUrl: string,
    env: Record<string, string>,
  ) => {
    if (stopped) throw new Error("the pool was stopped while starting");
    return new Supervisor({
      name,
      spawn: () =>
        childHandle(spawnEntry(script, { env: { ...options.env, ...env }, stdout: "inherit" })),
      ready: (child) =>
        waitReady(childUrl, child, {
          token: options.internalToken,
          fetch: script.startsWith("router") ? probe : fetch,
        }),
      log,
      onChange: () => options.onChange?.(status()),
    });
  };
  const stop = async () => {
    stopped = true;
    await router?.supervisor.stop();
    await control?.close();
    await scalable?.close();
    for (const child of [...backends].reverse()) await child.supervisor.stop();
    probe?.close();
  };
  const start = async () => {
    try {
      probe = createTrustedFetch({ ca: await routerTrust(config), checkHostname: false });
      // Step 1: backends in parallel, each loading the model.
      backendUrls.forEach((backendUrl, i) =>
        backends.push({
          url: backendUrl,
          supervisor: supervise(`backend-${i + 1}`, "gpu-backend/main.ts", backendUrl, {
            SWITCHYARD_BACKEND__HOST: "127.0.0.1",
            SWITCHYARD_BACKEND__PORT: String(config.pool.base_port + i),
            SWITCHYARD_BACKEND__ID: `backend-${i + 1}`,
          }),
        })
      );
      await startWithProgress(backends.map((b) => b.supervisor), "loading the model", options);
      if (scalable !== undefined) {
        backends.forEach((b) => scalable.adopt(b.supervisor.name, b.url, b.supervisor));
        control = serveLauncherControl(scalable, { token: options.internalToken });
        log(`local scaler: the launcher's control API listens on ${control.url}`);
      }
      // Step 2: the router in front of them.
      router = {
        url,
        supervisor: supervise("router", "router/main.ts", url, {
          SWITCHYARD_ROUTER__BACKENDS: JSON.stringify(backendUrls),
          SWITCHYARD_AUTH__ADMIN_TOKEN: options.adminToken,
          ...(control ? { SWITCHYARD_PREWARM__LAUNCHER_URL: control.url } : {}),
        }),
      };
      await startWithProgress([router.supervisor], "waiting for its first health checks", options);
    } catch (error) {
      await stop();
      throw error;
    }
    options.onChange?.(status());
  };
  return { routerUrl: url, start, status, stop };
}

/** Starts supervisors in parallel with a line per ready child and periodic "still" lines. */
async function startWithProgress(
  supervisors: Supervisor[],
  doing: string,
  options: LocalPoolOptions,
): Promise<void> {
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  const pending = new Set(supervisors.map((supervisor) => supervisor.name));
  options.log(`Starting ${[...pending].join(", ")} (${doing})…`);
  const ticker = setInterval(
    () => options.log(`  still ${doing}: ${[...pending].join(", ")} (${elapsed()})`),
    (options.progressEveryS ?? 5) * 1000,
  );
  try {
    await Promise.all(supervisors.map(async (supervisor) => {
      try {
        await supervisor.start();
      } catch (error) {
        throw new Error(`${supervisor.name} did not start: ${(error as Error).message}`);
      }
      pending.delete(supervisor.name);
      options.log(`  ${supervisor.name} ready after ${elapsed()} (pid ${supervisor.pid})`);
    }));
  } finally {
    clearInterval(ticker);
  }
}
