/**
 * @module Wires the pre-warm job for `startRouter`: traffic from the KV series and the
 * forecasters, events from the given source, the router's balancer and plan store,
 * residency calls with the internal token, capacity from the load collector, and the
 * scaler `prewarm.scaler` names.
 */
import type { Config } from "../../../shared/config.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { PlanBackend } from "../../../shared/placement_plan.ts";
import type { Balancer } from "../balancer/balancer.ts";
import type { PlanStore } from "../balancer/plan_store.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import { TrafficStore } from "../traffic/traffic_store.ts";
import type { CapacitySignals } from "./capacity.ts";
import { LocalScaler, processLauncher } from "./local_scaler.ts";
import { PrewarmJob } from "./prewarm_job.ts";
import { KvPrewarmHistory } from "./prewarm_history.ts";
import { storeTrafficSource } from "./prewarm_sources.ts";
import type { EventSource, Scaler, TrafficSource } from "./prewarm_types.ts";
import { ResidencyClient } from "./residency_client.ts";
import { AdvisoryScaler, WebhookScaler } from "./scalers.ts";

/** What {@linkcode createPrewarmJob} wires. */
export interface CreatePrewarmDeps {
  kv: Deno.Kv;
  balancer: Balancer;
  plans: PlanStore;
  backends: () => PlanBackend[];
  poolLoad: () => CapacitySignals | null;
  /** Top-k of the served model, when known. */
  topK: () => number | null;
  /** The per-expert load the balancer observes (its detection window), when known. */
  observedLoad?: (model: string) => number[][] | null;
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
  /** Scheduled events; default none (until an events store is wired). */
  events?: EventSource;
  /** Traffic; default the KV traffic series at `traffic.bucket`. */
  traffic?: TrafficSource;
  /** Adds a backend the `local` scaler started to the router's pool. */
  addBackend?: (url: string) => void;
}

/** The scaler `config.prewarm.scaler` names. */
export function createScaler(
  config: Config,
  deps: { fetch: FetchLike; clock: Clock; addBackend?: (url: string) => void },
): Scaler {
  const { prewarm } = config;
  if (prewarm.scaler === "webhook") {
    if (prewarm.scaler_webhook === undefined) {
      throw new TypeError(
        "Cannot create the webhook scaler: prewarm.scaler_webhook must be set when prewarm.scaler is webhook",
      );
    }
    return new WebhookScaler({ url: prewarm.scaler_webhook, fetch: deps.fetch, clock: deps.clock });
  }
  if (prewarm.scaler === "local") {
    return new LocalScaler(
      processLauncher({
        root: new URL("../../../", import.meta.url).pathname,
        basePort: config.pool.base_port + config.pool.backends,
        env: {
          SWITCHYARD_MODEL__DIR: config.model.dir,
          ...(config.auth.internal_token
            ? { SWITCHYARD_AUTH__INTERNAL_TOKEN: config.auth.internal_token }
            : {}),
        },
      }),
      deps.addBackend,
    );
  }
  return new AdvisoryScaler();
}

/** The pre-warm job of a router; see the module doc. */
export function createPrewarmJob(config: Config, deps: CreatePrewarmDeps): PrewarmJob {
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
    warmer: new ResidencyClient({
      fetch: deps.fetch,
      clock: deps.clock,
      internalToken: config.auth.internal_token,
    }),
    scaler: createScaler(config, deps),
    backends: deps.backends,
    currentPlan: (model) => deps.plans.current(model),
    poolLoad: deps.poolLoad,
    topK: deps.topK,
    ...(deps.observedLoad ? { observedExpertLoad: deps.observedLoad } : {}),
    logger: deps.logger,
  }, { clock: deps.clock, history: new KvPrewarmHistory(deps.kv) });
}
