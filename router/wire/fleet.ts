/**
 * @module The router as one of many: the leader lease (which router runs the control
 * loops), the leader's views for followers, backend discovery, and the routes that come
 * with them — `GET /api/leader` (read-only: this router, the lease, the lease log),
 * register discovery's `POST /api/backends/announce`, and a guard that answers 409
 * (naming the leader) to plan switches sent to a follower, whose writes the lease fences
 * anyway. Without shared state or with `leader.enabled: false` this router always leads.
 */
import { Hono } from "hono";
import type { Config } from "../../shared/config.ts";
import { ApiError, errorResponse } from "../../shared/errors.ts";
import type { Logger } from "../../shared/logger.ts";
import type { PlanFence } from "../control/balancer/plan_store.ts";
import {
  announceRoutes,
  createDiscovery,
  type MembershipChange,
} from "../control/discovery/mod.ts";
import type { RouterDiscovery } from "../control/discovery/create_discovery.ts";
import type { DiscoveredPool } from "../control/discovery/discovery.ts";
import { KvLeaseStore, LeaderElector } from "../control/leader/mod.ts";
import { LeaderViews } from "../control/leader/leader_views.ts";
import { withKvRetry } from "../control/state/kv_retry.ts";
import type { Clock } from "../runtime/clock.ts";
import type { PlanOwner } from "../../shared/plan_owner.ts";

/** Plan-changing routes only the leader serves. */
const LEADER_ONLY = new Set(["POST /api/plan/apply", "POST /api/advice/apply"]);

/** What {@linkcode createFleet} needs. */
export interface FleetDeps {
  kv: Deno.Kv | undefined;
  pool: DiscoveredPool;
  clock: Clock;
  logger: Logger;
  /** Called when discovery changes the pool. */
  onMembership?: (change: MembershipChange) => void;
  /** Whether a published view is out of date (see `LeaderViews`). */
  viewStale?: (path: string, body: string) => Promise<boolean>;
  /** The pool id plan calls carry (`router/control/leader/pool_id.ts`). */
  poolId: string;
}

/** The lease as this router sees it (`router/operate/metrics/leader_metrics.ts`). */
export interface LeadershipReading {
  leader: boolean;
  /** The lease's term as last read or written (any holder); null without a lease. */
  term: number | null;
  /** Milliseconds since the lease was last renewed by its holder; null without a lease. */
  renewalAgeMs: number | null;
}

/** The wired fleet pieces; see the module doc. */
export interface Fleet {
  /** This router's name (lease holder name, series shard). */
  id: string;
  isLeader(): boolean;
  /** The pool id this router's plan calls carry. */
  poolId: string;
  /** What plan calls carry now: pool id and leader term (0 without a lease); null when not leading. */
  owner(): PlanOwner | null;
  /** For the leader metrics: whether this router leads, the lease as last read, its renewal age. */
  leadership(): LeadershipReading;
  /**
   * While leading: when the previous leader's term began, from the lease log (a dead
   * leader may hold the lease past a cron minute it never ran); null for the first term,
   * or without a lease.
   */
  previousTermSince(): Promise<number | null>;
  /** The plan-store fence; undefined when this router always leads. */
  fence: (() => Promise<PlanFence | null>) | undefined;
  discovery: RouterDiscovery;
  views: LeaderViews | undefined;
  /** Runs `lead` whenever this router becomes leader (now too, if it is) and `follow` when it stops. */
  whileLeader(lead: () => void | Promise<void>, follow: () => void | Promise<void>): void;
  /**
   * The guard and view middleware and the fleet routes as a Hono app; mounted with
   * `app.route("/", …)` before the routes the middleware covers.
   */
  routes: Hono;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Wires the lease, views and discovery of `config`. */
export function createFleet(
  config: Pick<Config, "auth" | "leader" | "router">,
  deps: FleetDeps,
): Fleet {
  const { kv, clock, logger } = deps;
  const id = config.leader.id ?? `router-${crypto.randomUUID().slice(0, 8)}`;
  const store = kv && new KvLeaseStore(kv);
  const elector = store && config.leader.enabled
    ? new LeaderElector({
      store,
      id,
      ttlMs: config.leader.ttl,
      renewIntervalMs: config.leader.renew_interval,
      clock,
      logger,
    })
    : undefined;
  const isLeader = () => elector?.isLeader() ?? true;
  const views = kv && elector && new LeaderViews(kv, {
    clock,
    logger,
    isLeader,
    leader: () => ({ id, term: elector.term() }),
    ...(deps.viewStale ? { stale: deps.viewStale } : {}),
  });
  const discovery = createDiscovery(config, {
    pool: deps.pool,
    kv,
    clock,
    logger,
    ...(deps.onMembership ? { onChange: deps.onMembership } : {}),
  });
  const fence = elector && store && (async (): Promise<PlanFence | null> => {
    const check = await elector.fence();
    const term = elector.term();
    return check === null || term === null ? null : { check, term, holder: id };
  });
  return {
    id,
    isLeader,
    poolId: deps.poolId,
    owner: () => {
      if (elector === undefined) return { pool: deps.poolId, term: 0 };
      const term = elector.term();
      return term === null ? null : { pool: deps.poolId, term };
    },
    previousTermSince: async () => {
      const term = elector?.term();
      if (store === undefined || term === null || term === undefined || term <= 1) return null;
      return (await withKvRetry(() => store.term(term - 1)))?.since ?? null;
    },
    leadership: () => ({
      leader: isLeader(),
      term: elector?.status().lease?.term ?? null,
      renewalAgeMs: elector?.renewalAgeMs() ?? null,
    }),
    fence,
    discovery,
    views,
    whileLeader(lead, follow) {
      const run = (leading: boolean) =>
        void Promise.resolve(leading ? lead() : follow()).catch((error) =>
          logger.error("leadership change handler failed", { error: (error as Error).message })
        );
      if (elector === undefined) return run(true);
      elector.onChange(run);
      if (elector.isLeader()) run(true);
    },
    routes: fleetRoutes(config, { id, isLeader, elector, store, views, discovery, logger }),
    async start() {
      await elector?.start();
      await discovery.discovery?.start();
    },
    async stop() {
      await discovery.discovery?.stop();
      await elector?.stop();
    },
  };
}

/**
 * The fleet's routes: the guard that refuses plan switches on a follower, the leader's
 * views for followers, `GET /api/leader`, and discovery's announce routes (register only).
 */
function fleetRoutes(config: Pick<Config, "auth">, parts: {
  id: string;
  isLeader: () => boolean;
  elector: LeaderElector | undefined;
  store: KvLeaseStore | undefined;
  views: LeaderViews | undefined;
  discovery: RouterDiscovery;
  logger: Logger;
}): Hono {
  const { id, isLeader, elector, store, views, discovery, logger } = parts;
  const app = new Hono();
  app.use("*", async (c, next) => {
    if (!LEADER_ONLY.has(`${c.req.method} ${c.req.path}`) || isLeader()) return await next();
    const holder = elector?.status().lease?.holder ?? "unknown";
    return errorResponse(
      new ApiError(
        "conflict",
        `Cannot change the plan here: router "${id}" is not the leader; send it to the leader "${holder}" (GET /api/leader)`,
      ),
    );
  });
  if (views) app.use("*", views.middleware());
  app.get("/api/leader", async (c) =>
    c.json({
      ...(elector?.status() ?? { id, leader: true, term: null, lease: null }),
      terms: store ? (await store.terms()).slice(-20) : [],
    }));
  if (discovery.registry) {
    app.route(
      "/api/backends",
      announceRoutes({
        registry: discovery.registry,
        internalToken: config.auth.internal_token,
        logger,
        onChange: () => void discovery.discovery?.refresh(),
      }),
    );
  }
  return app;
}
