/**
 * @module Wires the pre-warm job for `startRouter`: traffic from the KV series and the
 * forecasters, events from the given source, the router's balancer, plan store and plan
 * calls (placement staged for a pool the job prepares), the backend pool (standby and
 * draining members), capacity from the load collector, and the scaler `prewarm.scaler`
 * names.
 */
import type { Config } from "../../../shared/config.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { PlanBackend } from "../../../shared/placement_plan.ts";
import type { Balancer } from "../balancer/balancer.ts";
import { BalancerError } from "../balancer/balancer_types.ts";
import type { BackendBudget } from "../balancer/budget_slots.ts";
import { limitSlots } from "../balancer/budget_slots.ts";
import type { PlanClient } from "../balancer/plan_client.ts";
import { slotsPerBackend } from "../balancer/plan_math.ts";
import type { PlanStore } from "../balancer/plan_store.ts";
import { stagePlan } from "../balancer/plan_switch.ts";
import { proposePlacement } from "../balancer/rebalancer.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import { TrafficStore } from "../traffic/traffic_store.ts";
import type { CapacitySignals } from "./capacity.ts";
import { DesiredReplicasScaler } from "./desired_scaler.ts";
import { LauncherScaler } from "./local_scaler.ts";
import { PrewarmJob } from "./prewarm_job.ts";
import { KvPrewarmHistory } from "./prewarm_history.ts";
import { storeTrafficSource } from "./prewarm_sources.ts";
import type {
  EventCalendar,
  PlacementPort,
  PoolPort,
  Scaler,
  TrafficSource,
} from "./prewarm_types.ts";
import { AdvisoryScaler, WebhookScaler } from "./scalers.ts";

/** What {@linkcode createPrewarmJob} wires. */
export interface CreatePrewarmDeps {
  kv: Deno.Kv;
  balancer: Balancer;
  plans: PlanStore;
  /** Plan calls to backends (stage). */
  client: Pick<PlanClient, "stage" | "activate" | "release">;
  pool: PoolPort;
  poolLoad: () => CapacitySignals | null;
  /** Each backend's memory budget (load reports), for placements of a pool being prepared. */
  budgets: () => ReadonlyMap<string, BackendBudget>;
  /** Top-k of the served model, when known. */
  topK: () => number | null;
  /** The per-expert load the balancer observes (its detection window), when known. */
  observedLoad?: (model: string) => number[][] | null;
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
  /** Scheduled events; default none (until an events store is wired). */
  events?: EventCalendar;
  /** Traffic; default the KV traffic series at `traffic.bucket`. */
  traffic?: TrafficSource;
}

/** The scaler `config.prewarm.scaler` names. */
export function createScaler(
  config: Pick<Config, "auth" | "prewarm">,
  deps: { fetch: FetchLike; clock: Clock },
): Scaler {
  const { prewarm } = config;
  if (prewarm.scaler === "webhook") {
    if (prewarm.scaler_webhook === undefined) {
      throw new TypeError(
        "Cannot create the webhook scaler: prewarm.scaler_webhook must be set when prewarm.scaler is webhook",
      );
    }
    return new WebhookScaler({
      url: prewarm.scaler_webhook,
      fetch: deps.fetch,
      clock: deps.clock,
      timeoutMs: prewarm.scaler_timeout,
    });
  }
  if (prewarm.scaler === "local") {
    if (prewarm.launcher_url === undefined) {
      throw new TypeError(
        "Cannot create the local scaler: prewarm.launcher_url must be set (deno task start sets it)",
      );
    }
    return new LauncherScaler({
      url: prewarm.launcher_url,
      fetch: deps.fetch,
      clock: deps.clock,
      token: config.auth.internal_token,
      timeoutMs: prewarm.scaler_timeout,
    });
  }
  if (prewarm.scaler === "kubernetes") return new DesiredReplicasScaler();
  return new AdvisoryScaler();
}

/** The planner's placement over a given backend list within their budgets, and staging. */
export function placementPort(
  config: Pick<Config, "expert_balancer">,
  deps: Pick<CreatePrewarmDeps, "balancer" | "plans" | "client" | "budgets" | "clock" | "logger">,
): PlacementPort {
  return {
    propose(load: number[][], backends: readonly PlanBackend[]) {
      const model = deps.balancer.modelShape();
      if (model === null) {
        throw new BalancerError("unavailable", "Cannot plan placement: model shape not known yet");
      }
      const limit = limitSlots(
        slotsPerBackend(model.experts, backends.length, config.expert_balancer.redundancy),
        {
          experts: model.experts,
          layers: model.layers,
          backends: backends.map((b) => b.id),
          budgets: deps.budgets(),
        },
      );
      if (!limit.ok) throw new BalancerError("conflict", `Cannot plan placement: ${limit.reason}`);
      return proposePlacement(load, {
        model,
        backends,
        redundancy: config.expert_balancer.redundancy,
        slots: limit.slots,
        reason: `prewarm: placement for ${backends.length} backends on the predicted load`,
      });
    },
    stage: (placement) =>
      stagePlan(placement, {
        store: deps.plans,
        client: deps.client,
        clock: deps.clock,
        logger: deps.logger,
      }),
  };
}

/** The pre-warm job of a router; see the module doc. */
export function createPrewarmJob(
  config: Pick<Config, "auth" | "expert_balancer" | "prewarm" | "router" | "traffic">,
  deps: CreatePrewarmDeps,
): PrewarmJob {
  const traffic = deps.traffic ?? storeTrafficSource(
    new TrafficStore(deps.kv, {
      clock: deps.clock,
      bucketMs: config.traffic.bucket,
      retentionMs: config.traffic.retention,
    }),
    { model: () => deps.balancer.modelShape()?.name ?? null },
  );
  return new PrewarmJob({
    settings: config.prewarm,
    traffic,
    events: deps.events ?? { upcoming: () => Promise.resolve([]) },
    balancer: deps.balancer,
    // Only the dynamic balancer places by load: under `static` or `off` (or a disabled
    // balancer) contracts add and remove backends and the balancer places as configured.
    ...(config.expert_balancer.enabled && config.expert_balancer.strategy === "dynamic"
      ? { placement: placementPort(config, deps) }
      : {}),
    scaler: createScaler(config, deps),
    pool: deps.pool,
    currentPlan: (model) => deps.plans.current(model),
    poolLoad: deps.poolLoad,
    topK: deps.topK,
    ...(deps.observedLoad ? { observedExpertLoad: deps.observedLoad } : {}),
    floor: Math.max(1, config.router.backends.length),
    clock: deps.clock,
    logger: deps.logger,
  }, { clock: deps.clock, history: new KvPrewarmHistory(deps.kv) });
}
