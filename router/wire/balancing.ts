/**
 * @module Expert placement on the router: the balancer (plans in KV, re-planning on the
 * observed load), its admin routes, the replica weights pushed to backends after every
 * load round, and the pre-warm job that stages plans for predicted load ahead of time.
 * All need Deno KV.
 */
import type { Config } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";
import { Hono } from "hono";
import { planRoutes } from "../operate/admin/plan_routes.ts";
import { Balancer } from "../control/balancer/balancer.ts";
import type { BalancerOptions } from "../control/balancer/balancer_types.ts";
import type { BackendBudget } from "../control/balancer/budget_slots.ts";
import { PlanClient } from "../control/balancer/plan_client.ts";
import { PlanAdoption } from "../control/balancer/plan_adoption.ts";
import { PlanReconciler, reportedPlans } from "../control/balancer/plan_reconciler.ts";
import { type PlanFence, PlanStore } from "../control/balancer/plan_store.ts";
import { modelShapeFromMetadata } from "../control/balancer/rebalancer.ts";
import { ReplicaWeightsPusher } from "../control/balancer/replica_weights_pusher.ts";
import { ShortWindowLoad } from "../control/balancer/short_window_load.ts";
import { type EventStore, prewarmEventSource } from "../control/events/event_store.ts";
import type { LoadHistory } from "../control/load/load_history.ts";
import { PlacementCostWindow } from "../control/load/cost_window.ts";
import type { PoolLoad } from "../control/load/pool_load.ts";
import type { BackendPool } from "../serve/pool/backend_pool.ts";
import { createPrewarmJob, type PrewarmJob, prewarmRoutes } from "../control/prewarm/mod.ts";
import type { Clock } from "../runtime/clock.ts";
import type { FetchLike } from "../runtime/fetch_like.ts";
import { modelParameter } from "./served_model.ts";
import type { PlanOwner } from "../../shared/plan_owner.ts";

/** What {@linkcode wireBalancing} reads. */
export interface BalancingDeps {
  kv: Deno.Kv;
  pool: BackendPool;
  /** The pool's load now. */
  load: () => PoolLoad;
  history: LoadHistory | undefined;
  events: EventStore | undefined;
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
  /** The leader lease's fence for plan switches; default none (one router). */
  fence?: () => Promise<PlanFence | null>;
  /** Pool id and leader term every plan call carries; null while not leading. Default: unfenced. */
  owner?: () => PlanOwner | null;
}

/** The wired balancer, its plan store, its routes and what must run with the router. */
export interface Balancing {
  /** The plan and pre-warm routes as a Hono app, mounted with `app.route("/", …)`. */
  app: Hono;
  balancer: Balancer;
  store: PlanStore;
  /** The pre-warm job (the caller schedules it: `Deno.cron`), when enabled. */
  prewarm: PrewarmJob | undefined;
  /** Repairs backends off the current plan (its counters feed metrics). */
  reconciler: PlanReconciler;
  /** Plan calls backends refused as coming from another pool or an older term (metrics). */
  refusedPlanCalls(): number;
  /**
   * The planner's measured costs and the pool's hop counters; every router records every
   * load round into it (`record`), the leader's balancer reads it.
   */
  costs: PlacementCostWindow;
  /** After every load round: reconcile backends' plans, push replica weights. */
  onRound(load: PoolLoad): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

/** Per-layer expert load of `model`: the KV-history EWMA, else the latest rates. */
export function observedLoad(
  model: string,
  snapshot: PoolLoad,
  history: LoadHistory | undefined,
): number[][] | null {
  const layers = snapshot.models.find((m) => m.model === model)?.layers;
  if (!layers || layers.length === 0) return null;
  const smoothed = layers.map((layer) => history?.ewma(model, layer.layer));
  if (smoothed.every((v) => v !== undefined)) return smoothed.map((v) => [...v!]);
  return layers.map((layer) => [...layer.expertTokensPerS]);
}

/**
 * Creates the balancer, pre-warm job and weights pusher, and their routes (`app`, mounted
 * with `app.route("/", …)`).
 */
export function wireBalancing(
  config: Pick<Config, "auth" | "expert_balancer" | "limits" | "prewarm" | "router" | "traffic">,
  deps: BalancingDeps,
): Balancing {
  const { pool, fetch, clock, logger } = deps;
  const internalToken = config.auth.internal_token;
  const store = new PlanStore(deps.kv, deps.fence ? { fence: deps.fence } : {});
  let prewarm: PrewarmJob | undefined;
  // The balancer detects and plans on a short window (expert_balancer.detect_window).
  const recent = new ShortWindowLoad(config.expert_balancer.detect_window);
  const observedNow = (model: string) =>
    recent.load(model) ?? observedLoad(model, deps.load(), deps.history);
  const owner = deps.owner ? { owner: deps.owner } : {};
  const refusals = refusalCounter(clock, logger);
  const onRefused = refusals.onRefused;
  const client = new PlanClient({
    fetch,
    clock,
    ...(internalToken ? { internalToken } : {}),
    ...owner,
    onRefused,
  });
  const budgets = () => memoryBudgets(deps.load());
  const reconciler = new PlanReconciler({ store, client, clock, logger });
  // What a remote row and an expert row cost, measured over the last minute of rounds.
  const costs = new PlacementCostWindow();
  const balancer = createBalancer(config, deps, {
    store,
    client,
    reconciler,
    costs,
    budgets,
    // While a pre-warm is in force the balancer also plans on the load it predicted.
    loadSource: (model) => {
      const observed = observedNow(model);
      return prewarm ? prewarm.blendLoad(model, observed, clock.now()) : observed;
    },
  });
  const weights = new ReplicaWeightsPusher({
    store,
    fetch,
    clock,
    logger,
    internalToken,
    ...owner,
    onRefused,
  });
  // Pre-warm job (scheduled by the caller: Deno.cron, every minute).
  if (config.prewarm.enabled) {
    prewarm = createPrewarm(config, deps, { balancer, store, client, budgets, observedNow });
  }
  const app = balancingRoutes(config, { balancer, store, prewarm, logger });
  return {
    app,
    balancer,
    store,
    prewarm,
    reconciler,
    refusedPlanCalls: () => refusals.count,
    costs,
    onRound: (load) => {
      recent.record(load);
      // Backends off the current plan (a restart) are repaired in the background.
      balancer.reconcile(reportedPlans(load.backends)).catch((error) =>
        logger.error("plan reconciliation failed", { error: (error as Error).message })
      );
      return weights.onLoad(load, [...pool.catalog().keys()][0] ?? null);
    },
    start: () => {
      prewarm?.start();
      balancer.start();
    },
    stop: async () => {
      await prewarm?.stop();
      await balancer.stop();
    },
  };
}

/** The plan routes at `/api/plan`, and the pre-warm job's at `/api/prewarm` when enabled. */
function balancingRoutes(
  config: Pick<Config, "auth" | "limits">,
  parts: { balancer: Balancer; store: PlanStore; prewarm: PrewarmJob | undefined; logger: Logger },
): Hono {
  const { balancer, store, prewarm, logger } = parts;
  const app = new Hono();
  app.route(
    "/api/plan",
    planRoutes({
      balancer,
      store,
      adminToken: config.auth.admin_token,
      logger,
      maxBodyBytes: config.limits.max_body_bytes,
    }),
  );
  if (prewarm) app.route("/api/prewarm", prewarmRoutes(prewarm));
  return app;
}

/** The pre-warm job over the balancer, its plans, the events and the pool's load. */
function createPrewarm(
  config: Pick<Config, "auth" | "expert_balancer" | "prewarm" | "router" | "traffic">,
  deps: BalancingDeps,
  parts: {
    balancer: Balancer;
    store: PlanStore;
    client: PlanClient;
    budgets: () => ReadonlyMap<string, BackendBudget>;
    observedNow: (model: string) => number[][] | null;
  },
): PrewarmJob {
  const { pool, fetch, clock, logger } = deps;
  return createPrewarmJob(config, {
    kv: deps.kv,
    balancer: parts.balancer,
    plans: parts.store,
    client: parts.client,
    pool,
    budgets: parts.budgets,
    ...(deps.events ? { events: prewarmEventSource(deps.events) } : {}),
    poolLoad: deps.load,
    topK: () => modelParameter(pool, "top_k") ?? null,
    // The job plans on what the balancer judges: max(observed, predicted).
    observedLoad: parts.observedNow,
    fetch,
    clock,
    logger,
  });
}

/**
 * Counts plan calls refused by backends that follow another pool; logs at most one error
 * every 30 s: never silent, never a storm.
 */
function refusalCounter(clock: Clock, logger: Logger) {
  const refusals = {
    count: 0,
    loggedAt: -Infinity,
    onRefused: (backend: string, reason: string) => {
      refusals.count++;
      if (clock.now() - refusals.loggedAt < 30_000) return;
      refusals.loggedAt = clock.now();
      logger.error("plan refused: another controller steers this pool", {
        event: "plan_owner",
        backend,
        reason,
        refused_total: refusals.count,
      });
    },
  };
  return refusals;
}

/** Memory budgets by backend name from the latest load reports: plans never exceed them. */
function memoryBudgets(load: PoolLoad): Map<string, BackendBudget> {
  return new Map(
    load.backends.flatMap((b) =>
      b.residency === undefined ? [] : [[b.name, {
        budgetBytes: b.residency.budgetBytes,
        expertBytes: b.residency.expertBytes,
      }]]
    ),
  );
}

/** The balancer over the pool's active members, its model shape and measured costs. */
function createBalancer(
  config: Pick<Config, "expert_balancer">,
  deps: BalancingDeps,
  parts: Pick<BalancerOptions, "store" | "reconciler" | "loadSource"> & {
    client: PlanClient;
    costs: PlacementCostWindow;
    budgets: () => ReadonlyMap<string, BackendBudget>;
  },
): Balancer {
  const { pool, clock, logger } = deps;
  const { store, client, costs } = parts;
  return new Balancer({
    store,
    client,
    reconciler: parts.reconciler,
    adoption: new PlanAdoption({ store, client, logger }),
    logger,
    clock,
    settings: config.expert_balancer,
    loadSource: parts.loadSource,
    // Every active member, healthy or not (a flapping backend must not re-place), named
    // as the backends name themselves; none until every one has said its name. Standby
    // members join the plan when the pre-warm job activates theirs; draining ones leave.
    backends: () => {
      const views = pool.views().filter((view) => (view.role ?? "active") === "active");
      if (views.some((view) => typeof view.details?.["backend_id"] !== "string")) return [];
      return views.map(({ name, url }) => ({ id: name, url }));
    },
    modelShape: () => {
      const [entry] = pool.catalog().values();
      return entry ? modelShapeFromMetadata(entry.metadata) : null;
    },
    costs: () => costs.estimates(clock.now()),
    // Memory budgets from the latest load reports: plans never exceed them.
    budgets: parts.budgets,
  });
}
