/**
 * @module A router app wired to fake backends, a manual clock and a memory logger.
 */
import { type Config, resolveConfig } from "../../../shared/config.ts";
import { type AppDeps, createApp, type RouterEnv } from "../../../router/serve/app.ts";
import { LoadCollector } from "../../../router/control/load/load_collector.ts";
import { loadRoutes } from "../../../router/control/load/load_routes.ts";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { BackendPool } from "../../../router/serve/pool/backend_pool.ts";
import { createPolicy } from "../../../router/serve/entry/create_policy.ts";
import { ManualClock } from "./manual_clock.ts";
import { FakeBackend, FakeNetwork } from "./fake_backend.ts";
import { seededRandom } from "./views.ts";
import type { Hono } from "hono";

/** A token long enough for the config schema. */
export const TEST_TOKEN = "internal-token-0123456789";

/** Options of {@linkcode createHarness}. */
export interface HarnessOptions {
  /** Number of fake backends (ids `127.0.0.1:9001`, `:9002`, …); default 2. */
  backends?: number;
  /** Raw config sections merged over the defaults (router.backends is filled in). */
  config?: Record<string, Record<string, unknown>>;
  /** Require and send the internal token; default true. */
  withToken?: boolean;
  /** Extra ready `details` per backend (e.g. `{ backend_id: "backend-1" }`). */
  backendDetails?: Array<Record<string, unknown>>;
  /** Skip the first health round (backends start unknown); default false. */
  noStart?: boolean;
  /**
   * Look model "tiny" up once after the first round, as a first request would; default
   * true. (Backends need not announce their models, so the router learns names on use.)
   */
  discover?: boolean;
  /** The state KV's readiness (`AppDeps.state`); default none. */
  state?: AppDeps["state"];
}

/** Everything a router test touches. */
export interface Harness {
  app: Hono<RouterEnv>;
  config: Config;
  pool: BackendPool;
  /** Load collector over the pool; not started (tests call `pollNow()`). */
  collector: LoadCollector;
  clock: ManualClock;
  logger: MemoryLogger;
  backends: FakeBackend[];
  network: FakeNetwork;
  close(): Promise<void>;
}

/** Builds the app over fake backends and runs the first health round. */
export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const withToken = options.withToken ?? true;
  const ids = Array.from({ length: options.backends ?? 2 }, (_, i) => `127.0.0.1:${9001 + i}`);
  const backends = ids.map((id, i) =>
    new FakeBackend({
      id,
      ...(withToken ? { internalToken: TEST_TOKEN } : {}),
      ...(options.backendDetails?.[i] ? { details: options.backendDetails[i] } : {}),
    })
  );
  const network = new FakeNetwork(backends);
  const raw = options.config ?? {};
  const config = resolveConfig({
    fileText: JSON.stringify({
      ...raw,
      router: { policy: "round_robin", ...raw["router"], backends: backends.map((b) => b.url) },
      auth: { ...(withToken ? { internal_token: TEST_TOKEN } : {}), ...raw["auth"] },
    }),
  });
  const clock = new ManualClock();
  const logger = new MemoryLogger();
  const deps = { fetch: network.fetch, clock, logger };
  const pool = BackendPool.fromConfig(config, deps);
  const collector = new LoadCollector(pool, {
    ...deps,
    internalToken: config.auth.internal_token,
  });
  const policy = createPolicy(config.router.policy, {
    random: seededRandom(1),
    loadOf: (id) => collector.loadOf(id),
  });
  const app = createApp({
    config,
    pool,
    policy,
    ...deps,
    ...(options.state ? { state: options.state } : {}),
  });
  app.route("/", loadRoutes(collector));
  if (!options.noStart) await pool.start();
  if (!options.noStart && (options.discover ?? true)) await pool.discoverModel("tiny");
  return {
    app,
    config,
    pool,
    collector,
    clock,
    logger,
    backends,
    network,
    close: async () => {
      await collector.stop();
      await pool.stop();
    },
  };
}
