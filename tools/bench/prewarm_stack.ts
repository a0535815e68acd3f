/**
 * @module One run's stack for the pre-warm benchmark, real processes on a compressed clock:
 *
 * - backends: `gpu-backend/main.ts` processes on the simulated executor (each a dedicated
 *   device whose layer executions take the device time measured from onnxruntime here);
 *   the first ones started up front, more started and stopped by the launcher's
 *   supervised {@linkcode ScalableBackends} behind its control API (the `local` scaler's
 *   far side), with the injected cold start before each spawn;
 * - the router in this process (`startRouter`: pool, load collector, traffic API), its own
 *   balancer `off` and its pre-warm job off: the bench builds the reactive balancer and
 *   the job on the compressed clock (`reactive_balancer.ts`), so every control period runs
 *   in simulated time;
 * - a traffic store on simulated time holding the trace's history (the job's forecasts).
 *
 * The launcher's clock is the compressed one too: its request and ready times, and so the
 * cold starts the router measures, are simulated milliseconds.
 */
import { resolveConfig } from "../../shared/config.ts";
import type { Config } from "../../shared/config.ts";
import { MemoryLogger } from "../../shared/logging/memory_logger.ts";
import { LauncherScaler } from "../../router/control/prewarm/local_scaler.ts";
import { systemClock } from "../../router/runtime/clock.ts";
import { TrafficStore } from "../../router/control/traffic/traffic_store.ts";
import { type RunningRouter, startRouter } from "../../router/wire/server.ts";
import { serveLauncherControl } from "../pool/launcher_control.ts";
import {
  freePort,
  type PoolProcess,
  spawnEntry,
  startProcess,
  waitReady,
} from "../pool/processes.ts";
import { ScalableBackends } from "../pool/scalable_backends.ts";
import { childHandle, Supervisor } from "../pool/supervisor.ts";
import { CompressedClock } from "./compressed_clock.ts";
import { type ReactiveBalancer, startReactiveBalancer } from "./reactive_balancer.ts";

export const TOKEN = "bench-prewarm-internal-token-0123456789";

/** Real ms between the router's load rounds. */
export const LOAD_INTERVAL_MS = 250;

/** Options of {@linkcode startStack}. */
export interface StackOptions {
  /** Env of every backend (model dir, simulated executor and its device time, …). */
  backendEnv: Record<string, string>;
  /** Backends started up front. */
  initial: number;
  /** Simulated seconds per real second. */
  speed: number;
  /** The simulated instant the run starts at. */
  simOrigin: number;
  /** Injected cold start before each scaled backend's spawn (real ms; a bench option). */
  injectedColdStartRealMs: number;
  /** Extra router env (`SWITCHYARD_*`). */
  routerEnv?: Record<string, string>;
  /** The pre-warm job's blend for the reactive balancer (`PrewarmJob.blendLoad`), once set. */
  blend: {
    current?: (model: string, observed: number[][] | null, now: number) => number[][] | null;
  };
  log(line: string): void;
}

/** A started stack; `close()` stops every process it started. */
export interface Stack {
  clock: CompressedClock;
  config: Config;
  router: RunningRouter;
  kv: Deno.Kv;
  launcher: ScalableBackends;
  scaler: LauncherScaler;
  reactive: ReactiveBalancer;
  /** The trace's history and the replay's buckets (simulated time). */
  store: TrafficStore;
  /** Plan status of every running backend: cold starts (expert loads on the request path). */
  coldStarts(): Promise<number>;
  close(): Promise<void>;
}

/** Starts the stack; see the module doc. */
export async function startStack(options: StackOptions): Promise<Stack> {
  const clock = new CompressedClock({ speed: options.speed, simOrigin: options.simOrigin });
  const env = {
    ...options.backendEnv,
    SWITCHYARD_AUTH__INTERNAL_TOKEN: TOKEN,
    SWITCHYARD_LOG__LEVEL: "warn",
    SWITCHYARD_LOG__DIR: "",
  };
  const first: PoolProcess[] = await Promise.all(
    Array.from({ length: options.initial }, (_, i) => {
      const port = freePort();
      return startProcess("gpu-backend/main.ts", {
        url: `http://127.0.0.1:${port}`,
        token: TOKEN,
        env: {
          ...env,
          SWITCHYARD_BACKEND__PORT: String(port),
          SWITCHYARD_BACKEND__ID: `backend-${i + 1}`,
        },
      });
    }),
  );
  const launcher = new ScalableBackends({
    basePort: freePort() + 100,
    clock,
    injectedColdStartMs: options.injectedColdStartRealMs * options.speed,
    log: options.log,
    spawn: (name, port) =>
      childHandle(spawnEntry("gpu-backend/main.ts", {
        env: { ...env, SWITCHYARD_BACKEND__PORT: String(port), SWITCHYARD_BACKEND__ID: name },
      })),
    ready: (url, child) => waitReady(url, child, { token: TOKEN }),
    // The supervisor's grace is on the compressed clock: 10 real seconds.
    stopGraceMs: 10_000 * options.speed,
  });
  for (const [i, backend] of first.entries()) {
    const supervisor = new Supervisor({
      name: `backend-${i + 1}`,
      clock,
      spawn: () => childHandle(backend.child),
      ready: () => Promise.resolve(),
      log: () => {},
      stopGraceMs: 10_000 * options.speed,
    });
    await supervisor.start();
    launcher.adopt(`backend-${i + 1}`, backend.url, supervisor);
  }
  const control = serveLauncherControl(launcher, { token: TOKEN });
  const kv = await Deno.openKv(":memory:");
  const seriesKv = await Deno.openKv(":memory:");
  const config = resolveConfig({
    env: {
      ...env,
      SWITCHYARD_ROUTER__HOST: "127.0.0.1",
      SWITCHYARD_ROUTER__PORT: "0",
      SWITCHYARD_ROUTER__BACKENDS: JSON.stringify(first.map((b) => b.url)),
      SWITCHYARD_ROUTER__HEALTH_INTERVAL: "300ms",
      SWITCHYARD_ROUTER__HEALTH_TIMEOUT: "5s",
      // The router's own balancer and job never act: the bench's run on simulated time.
      SWITCHYARD_EXPERT_BALANCER__STRATEGY: "off",
      SWITCHYARD_PREWARM__ENABLED: "false",
      SWITCHYARD_LOG__REQUESTS: "false",
      ...options.routerEnv,
    },
  });
  const router = await startRouter(config, {
    kv,
    logger: new MemoryLogger(),
    loadIntervalMs: LOAD_INTERVAL_MS,
    registerCron: false,
  });
  for (let i = 0; i < 100 && router.balancer!.modelShape() === null; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const reactive = await startReactiveBalancer({
    config,
    router,
    kv,
    clock,
    speed: options.speed,
    loadIntervalMs: LOAD_INTERVAL_MS,
    logger: new MemoryLogger(),
    blend: (model, observed, now) =>
      options.blend.current ? options.blend.current(model, observed, now) : observed,
  });
  const sim = { now: () => clock.now() };
  const store = new TrafficStore(seriesKv, { clock: sim, retentionMs: 30 * 86_400_000 });
  const scaler = new LauncherScaler({
    url: control.url,
    fetch,
    clock: systemClock,
    token: TOKEN,
    timeoutMs: 10_000,
  });
  return {
    clock,
    config,
    router,
    kv,
    launcher,
    scaler,
    reactive,
    store,
    async coldStarts() {
      let total = 0;
      for (const { url } of launcher.list().backends) {
        try {
          const response = await fetch(`${url}/v2/plan`, {
            headers: { authorization: `Bearer ${TOKEN}` },
          });
          if (!response.ok) {
            await response.body?.cancel();
            continue;
          }
          total += (await response.json()).cold_starts ?? 0;
        } catch { /* stopping */ }
      }
      return total;
    },
    async close() {
      await reactive.stop();
      await router.close();
      await control.close();
      await launcher.close();
      for (const { supervisor } of launcher.supervisors()) await supervisor.stop();
      await Promise.all(first.map((b) => b.kill()));
      kv.close();
      seriesKv.close();
    },
  };
}
