/**
 * @module Several routers sharing one state in front of backends that announce
 * themselves — all real processes on loopback, one Deno KV file — for the multi-router
 * test and `deno task bench:fleet`. Router `router-1` starts first and is the first
 * leader; backends announce to the last router (a follower); each router's stdout (JSON
 * log lines: the leader's "leader elected"/"leader lost" lines among them) goes to a file.
 */
import { freePort, spawnEntry, waitReady } from "./processes.ts";
import { waitFor, type WaitForOptions } from "../wait_for.ts";

/** Options of {@linkcode startFleet}. */
export interface FleetOptions {
  modelDir: string;
  routers: number;
  backends: number;
  /** Holds the KV file and the routers' logs. */
  dir: string;
  /** Extra env of routers (`SWITCHYARD_*`). */
  routerEnv?: Record<string, string>;
  /** Extra env of backends. */
  backendEnv?: Record<string, string>;
}

/** One router process. */
export interface FleetRouter {
  id: string;
  url: string;
  log: string;
  child: Deno.ChildProcess;
  alive: boolean;
  /** Sends `signal` and waits for the process to end. */
  stop(signal: Deno.Signal): Promise<void>;
}

/** A running fleet. */
export interface Fleet {
  routers: FleetRouter[];
  backends: { id: string; url: string; child: Deno.ChildProcess }[];
  kvPath: string;
  token: string;
  adminToken: string;
  /** SIGTERMs every live router (they flush their series), then kills the backends. */
  close(): Promise<void>;
}

export const FLEET_TOKEN = "fleet-internal-token-0123456789";
export const FLEET_ADMIN_TOKEN = "fleet-admin-token-0123456789";

async function getJson(url: string): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${url} answered ${response.status}`);
  }
  return await response.json();
}

/** Fleet waits: every 100 ms for up to a minute; a failed call counts as "not yet". */
export const FLEET_WAIT: WaitForOptions = { timeoutMs: 60_000, intervalMs: 100, retryErrors: true };

async function startRouter(index: number, options: FleetOptions, kvPath: string) {
  const id = `router-${index + 1}`;
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const log = `${options.dir}/${id}.log`;
  const child = spawnEntry("router/main.ts", {
    stdout: "piped",
    env: {
      SWITCHYARD_MODEL__DIR: options.modelDir,
      SWITCHYARD_AUTH__INTERNAL_TOKEN: FLEET_TOKEN,
      SWITCHYARD_AUTH__ADMIN_TOKEN: FLEET_ADMIN_TOKEN,
      SWITCHYARD_STATE__KV: kvPath,
      SWITCHYARD_LOG__DIR: "",
      SWITCHYARD_LOG__REQUESTS: "false",
      SWITCHYARD_ROUTER__HOST: "127.0.0.1",
      SWITCHYARD_ROUTER__PORT: String(port),
      SWITCHYARD_ROUTER__HEALTH_INTERVAL: "200ms",
      SWITCHYARD_ROUTER__DISCOVERY__MODE: "register",
      SWITCHYARD_ROUTER__DISCOVERY__INTERVAL: "500ms",
      SWITCHYARD_ROUTER__DISCOVERY__TTL: "4s",
      SWITCHYARD_LEADER__ID: id,
      ...options.routerEnv,
    },
  });
  const file = await Deno.open(log, { write: true, create: true, truncate: true });
  void child.stdout.pipeTo(file.writable).catch(() => {});
  const router: FleetRouter = {
    id,
    url,
    log,
    child,
    alive: true,
    async stop(signal) {
      router.alive = false;
      try {
        child.kill(signal);
      } catch { /* already gone */ }
      await child.status;
    },
  };
  await waitFor(`${id} to listen`, async () => {
    const response = await fetch(`${url}/v2/health/live`);
    await response.body?.cancel();
    return response.ok;
  }, FLEET_WAIT);
  return router;
}

/** Starts the routers (router-1 first, as leader), then backends announcing themselves. */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const kvPath = `${options.dir}/state.kv`;
  const routers: FleetRouter[] = [];
  const backends: Fleet["backends"] = [];
  const fleet: Fleet = {
    routers,
    backends,
    kvPath,
    token: FLEET_TOKEN,
    adminToken: FLEET_ADMIN_TOKEN,
    async close() {
      await Promise.all(routers.filter((r) => r.alive).map((r) => r.stop("SIGTERM")));
      for (const backend of backends) {
        try {
          backend.child.kill("SIGKILL");
        } catch { /* gone */ }
        await backend.child.status;
      }
    },
  };
  try {
    routers.push(await startRouter(0, options, kvPath));
    await waitFor(
      "router-1 to lead",
      async () => ((await getJson(`${routers[0]!.url}/api/leader`)) as { leader: boolean }).leader,
      FLEET_WAIT,
    );
    for (let i = 1; i < options.routers; i++) routers.push(await startRouter(i, options, kvPath));
    const announceTo = routers.at(-1)!.url;
    for (let i = 0; i < options.backends; i++) {
      const port = freePort();
      const url = `http://127.0.0.1:${port}`;
      const id = `backend-${i + 1}`;
      const child = spawnEntry("gpu-backend/main.ts", {
        env: {
          SWITCHYARD_MODEL__DIR: options.modelDir,
          SWITCHYARD_AUTH__INTERNAL_TOKEN: FLEET_TOKEN,
          SWITCHYARD_LOG__DIR: "",
          SWITCHYARD_LOG__LEVEL: "warn",
          SWITCHYARD_STATE__KV: ":memory:",
          SWITCHYARD_BACKEND__PORT: String(port),
          SWITCHYARD_BACKEND__ID: id,
          SWITCHYARD_BACKEND__EXECUTORS: "1",
          SWITCHYARD_BACKEND__ANNOUNCE__ROUTER: announceTo,
          SWITCHYARD_BACKEND__ANNOUNCE__INTERVAL: "1s",
          ...options.backendEnv,
        },
      });
      backends.push({ id, url, child });
      await waitReady(url, child, FLEET_TOKEN);
    }
    // Every router found every backend (register discovery) and checked it healthy.
    for (const router of routers) {
      await waitFor(`${router.id} to see ${options.backends} healthy backends`, async () => {
        const ready = await getJson(`${router.url}/v2/health/ready`) as {
          details: { healthy_backends: number };
        };
        return ready.details.healthy_backends === options.backends;
      }, FLEET_WAIT);
    }
  } catch (error) {
    await fleet.close();
    throw error;
  }
  return fleet;
}

/** `{event: "leader", …}` lines of a router's log, parsed. */
export async function leaderLines(router: FleetRouter): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(router.log).catch(() => "");
  return text.split("\n").flatMap((line) => {
    if (!line.includes('"event":"leader"')) return [];
    try {
      return [JSON.parse(line)];
    } catch {
      return [];
    }
  });
}
