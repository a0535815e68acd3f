/**
 * @module The supervised local pool behind `deno task start`: N backends and the router
 * as child processes on loopback, each kept alive by a {@linkcode Supervisor} (restart
 * with backoff, counted and logged; one child's exit never stops the others).
 *
 * Step 1: backends start in parallel; a line per backend when its model is loaded, and a
 * "still loading" line every few seconds until all are. Step 2: the router, probed over
 * its public URL (HTTPS probes trust `router.tls.ca` or the certificate itself). A child
 * that cannot start the first time stops the pool: that is a configuration problem.
 */
import type { Config } from "../../shared/config.ts";
import { routerTrust, routerUrl } from "../client/router_address.ts";
import { createTrustedFetch } from "../client/trusted_fetch.ts";
import { spawnEntry, waitReady } from "./processes.ts";
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

/** Options of {@linkcode startLocalPool}. */
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
}

/** A running supervised pool. */
export interface LocalPool {
  routerUrl: string;
  status(): PoolStatus;
  /** Stops supervising and ends every child (router first). */
  stop(): Promise<void>;
}

/** Starts the pool; resolves when every child is ready, rejects (nothing left running) if one is not. */
export async function startLocalPool(options: LocalPoolOptions): Promise<LocalPool> {
  const { config, log } = options;
  const backendUrls = Array.from(
    { length: config.pool.backends },
    (_, i) => `http://127.0.0.1:${config.pool.base_port + i}`,
  );
  const url = routerUrl(config);
  const probe = createTrustedFetch({ ca: await routerTrust(config), checkHostname: false });
  const children: { supervisor: Supervisor; url: string }[] = [];
  const status = (): PoolStatus => {
    const describe = ({ supervisor, url }: (typeof children)[number]): ChildStatus => ({
      name: supervisor.name,
      url,
      pid: supervisor.pid ?? null,
      restarts: supervisor.restarts,
    });
    return { router: describe(children.at(-1)!), backends: children.slice(0, -1).map(describe) };
  };
  const supervise = (
    name: string,
    script: string,
    childUrl: string,
    env: Record<string, string>,
  ) => {
    const supervisor = new Supervisor({
      name,
      spawn: () =>
        childHandle(spawnEntry(script, { env: { ...options.env, ...env }, stdout: "inherit" })),
      ready: (child) =>
        waitReady(childUrl, child, {
          token: options.internalToken,
          fetch: script.startsWith("router") ? probe : fetch,
        }),
      log,
      onChange: () => children.length > backendUrls.length && options.onChange?.(status()),
    });
    children.push({ supervisor, url: childUrl });
    return supervisor;
  };
  const stop = async () => {
    for (const { supervisor } of [...children].reverse()) await supervisor.stop();
    probe.close();
  };

  try {
    // Step 1: backends in parallel, each loading the model.
    const backends = backendUrls.map((backendUrl, i) =>
      supervise(`backend-${i + 1}`, "gpu-backend/main.ts", backendUrl, {
        SWITCHYARD_BACKEND__HOST: "127.0.0.1",
        SWITCHYARD_BACKEND__PORT: String(config.pool.base_port + i),
        SWITCHYARD_BACKEND__ID: `backend-${i + 1}`,
      })
    );
    await startWithProgress(backends, "loading the model", options);
    // Step 2: the router in front of them.
    const router = supervise("router", "router/main.ts", url, {
      SWITCHYARD_ROUTER__BACKENDS: JSON.stringify(backendUrls),
      SWITCHYARD_AUTH__ADMIN_TOKEN: options.adminToken,
    });
    await startWithProgress([router], "waiting for its first health checks", options);
  } catch (error) {
    await stop();
    throw error;
  }
  options.onChange?.(status());
  return { routerUrl: url, status, stop };
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
