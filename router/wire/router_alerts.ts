/**
 * @module The router's alerts: rules over every load round, the latency SLO over every
 * router's requests (histograms shared through the KV), the balancer's health and the
 * pre-warm job's conditions. Every router evaluates (its dashboard shows them); only the
 * leader announces.
 */
import type { Config } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";
import { AlertManager, alertSettingsFromConfig, AlertStore } from "../operate/alerts/mod.ts";
import { PoolLatency } from "../operate/requests/pool_latency.ts";
import type { RequestWindow } from "../operate/requests/request_window.ts";
import type { BackendPool } from "../serve/pool/backend_pool.ts";
import type { Clock } from "../runtime/clock.ts";
import type { FetchLike } from "../runtime/fetch_like.ts";
import type { Fleet } from "./fleet.ts";
import type { LateParts } from "./late_parts.ts";

/** What {@linkcode createRouterAlerts} reads. */
export interface RouterAlertsDeps {
  kv: Deno.Kv | undefined;
  pool: BackendPool;
  fleet: Fleet;
  /** This router's requests (the latency SLO's own share). */
  requests: RequestWindow;
  /** The balancing, once wired: the rebalance and capacity alerts read it. */
  late: LateParts;
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
}

/** The alert manager, its KV records (none without KV) and the pool-wide latency it reads. */
export interface RouterAlerts {
  alerts: AlertManager;
  store: AlertStore | undefined;
  poolLatency: PoolLatency;
}

/** Creates the router's alerts; KV records and webhook POSTs never block a round. */
export function createRouterAlerts(
  config: Pick<Config, "alerts" | "expert_balancer" | "router">,
  deps: RouterAlertsDeps,
): RouterAlerts {
  const { pool, fleet, late, fetch, clock, logger } = deps;
  const store = deps.kv && new AlertStore(deps.kv, { logger });
  // The latency SLO over every router's requests (histograms shared through the KV).
  const poolLatency = new PoolLatency({
    kv: deps.kv,
    id: fleet.id,
    own: (now) => deps.requests.latencyHistogram(now, config.alerts.latency_window),
    clock,
    logger,
  });
  const alerts = new AlertManager({
    settings: alertSettingsFromConfig(config),
    views: () => pool.views(),
    latency: (now) => poolLatency.reading(now),
    rebalance: () => {
      const balancer = late.balancing?.balancer;
      const model = balancer?.modelShape()?.name;
      return balancer && model
        ? {
          model,
          health: balancer.health(),
          fullReplication: balancer.placement()?.choice === "full_replication",
        }
        : undefined;
    },
    // Capacity contracts at risk or missed, a scaler failing (the pre-warm job's).
    conditions: () => late.balancing?.prewarm?.conditions() ?? [],
    clock,
    logger,
    store,
    announcing: () => fleet.isLeader(),
    ...(config.alerts.webhook
      ? { webhook: { url: config.alerts.webhook, fetch, format: config.alerts.webhook_format } }
      : {}),
    ...(config.alerts.alertmanager
      ? { alertmanager: { url: config.alerts.alertmanager, fetch } }
      : {}),
    externalUrl: `${
      config.router.tls?.cert ? "https" : "http"
    }://localhost:${config.router.port}/dashboard`,
  });
  return { alerts, store, poolLatency };
}
