/**
 * @module Step 1 of wiring a router: the backend pool (with the router's own event-loop
 * lag, which health excuses timeouts by), the overload guards, the state KV and its
 * readiness, and the fleet — the lease that picks the one router among many running the
 * control loops.
 */
import type { RouterConfig } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";
import { resolvePoolId } from "../control/leader/pool_id.ts";
import { createGuards, type RouterGuards } from "../serve/guards.ts";
import { LoopLagMonitor } from "../serve/health/loop_lag.ts";
import { BackendPool } from "../serve/pool/backend_pool.ts";
import type { Clock } from "../runtime/clock.ts";
import type { FetchLike } from "../runtime/fetch_like.ts";
import { createFleet, type Fleet } from "./fleet.ts";
import type { LateParts } from "./late_parts.ts";
import { openStateKv, StateHealth, type StateKv } from "./state_kv.ts";

/** The parts every later step of the wiring reads. */
export interface RouterCore {
  config: RouterConfig;
  logger: Logger;
  clock: Clock;
  fetch: FetchLike;
  lag: LoopLagMonitor;
  pool: BackendPool;
  guards: RouterGuards;
  state: StateKv | undefined;
  stateHealth: StateHealth;
  fleet: Fleet;
  /** Parts created later (the app, the balancing, the operator API). */
  late: LateParts;
  /** Reads the app in process, with the viewer token when one is configured. */
  inProcess(path: string): Response | Promise<Response>;
}

/** What {@linkcode wireCore} is given. */
export interface RouterCoreOptions {
  logger: Logger;
  clock: Clock;
  fetch: FetchLike;
  /** A KV store the caller owns; default `state.kv`, opened and closed with the router. */
  kv: Deno.Kv | undefined;
}

/** Opens the state KV and creates the pool, guards and fleet of the router for `config`. */
export async function wireCore(
  config: RouterConfig,
  options: RouterCoreOptions,
): Promise<RouterCore> {
  const { logger, clock, fetch } = options;
  // The router's own event-loop lag: health excuses timeouts it explains.
  const lag = new LoopLagMonitor(clock);
  const pool = BackendPool.fromConfig(config, {
    fetch,
    clock,
    logger,
    lagSince: (since) => lag.maxSince(since),
  });
  const guards = createGuards(config, { clock, logger });
  const opened = await openStateKv(config, options.kv, logger);
  const state = opened.state;
  // Readiness says when the KV is unavailable (state.required: false) or stops reading.
  const stateHealth = new StateHealth(opened, {
    location: options.kv === undefined ? config.state.kv : "(provided)",
    clock,
  });
  const viewer = config.auth.viewer_token;
  // Assigned as the app and the features are created; rounds and metrics use them then.
  const late: LateParts = {};
  const inProcess = (path: string) =>
    late.app!.request(path, viewer ? { headers: { authorization: `Bearer ${viewer}` } } : {});
  const fleet = await routerFleet(config, { kv: state?.kv, pool, late, clock, logger });
  return {
    config,
    logger,
    clock,
    fetch,
    lag,
    pool,
    guards,
    state,
    stateHealth,
    fleet,
    late,
    inProcess,
  };
}

/**
 * One router among many: the lease picks the one running the control loops; plan calls
 * carry the pool id (shared through the KV) and the lease's term.
 */
async function routerFleet(
  config: RouterConfig,
  deps: {
    kv: Deno.Kv | undefined;
    pool: BackendPool;
    late: LateParts;
    clock: Clock;
    logger: Logger;
  },
): Promise<Fleet> {
  const { late } = deps;
  const poolId = await resolvePoolId(deps.kv, config.state.pool_id);
  const fleet = createFleet(config, {
    poolId,
    kv: deps.kv,
    pool: deps.pool,
    clock: deps.clock,
    logger: deps.logger,
    // New or vanished backends: the leader re-plans at once.
    onMembership: () => {
      if (fleet.isLeader()) void late.balancing?.balancer.tick();
    },
    // The leader's /api/plan copy is stale once it names another version than KV's current.
    viewStale: async (path, body) => {
      const balancing = late.balancing;
      if (path !== "/api/plan" || balancing === undefined) return false;
      const view = JSON.parse(body) as { model: string | null; version: number | null };
      if (view.model === null) return false;
      return view.version !== await balancing.store.currentVersion(view.model);
    },
  });
  return fleet;
}
