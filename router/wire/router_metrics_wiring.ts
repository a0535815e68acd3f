/**
 * @module The router's `/metrics`: everything but the request counters is read when
 * Prometheus scrapes — pool views, load, plans, alerts, leadership, the pre-warm job, the
 * balancer's EPLB statistics and the overload guards.
 */
import type { InputFaults } from "../../shared/input_faults.ts";
import type { LogPipelineStats } from "../../shared/logging/service_logger.ts";
import { ROUTER_VERSION } from "../../shared/version.ts";
import type { AlertManager } from "../operate/alerts/mod.ts";
import { RouterMetrics } from "../operate/metrics/router_metrics.ts";
import type { ObserverFailures } from "../operate/requests/observer_failures.ts";
import type { PoolLoad } from "../control/load/pool_load.ts";
import type { FrontCounts } from "../serve/front/node_server.ts";
import type { RouterGuards } from "../serve/guards.ts";
import type { LoopLagMonitor } from "../serve/health/loop_lag.ts";
import type { BackendPool } from "../serve/pool/backend_pool.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Fleet } from "./fleet.ts";
import type { LateParts } from "./late_parts.ts";
import type { StateKv } from "./state_kv.ts";

/** What {@linkcode createRouterMetrics} reads. */
export interface MetricsWiringDeps {
  /** The state KV; without it there are no plan or EPLB metrics. */
  state: StateKv | undefined;
  pool: BackendPool;
  load: () => PoolLoad;
  alerts: AlertManager;
  fleet: Fleet;
  guards: RouterGuards;
  lag: LoopLagMonitor;
  inputFaults: InputFaults;
  observerFailures: ObserverFailures;
  /** The HTTP front's connection counts, once a `node` front serves the app. */
  connections: { read?: () => FrontCounts };
  logShipping: (() => LogPipelineStats) | undefined;
  /** The balancing, once wired. */
  late: LateParts;
  clock: Clock;
}

/** Creates the router's metrics over `deps`. */
export function createRouterMetrics(deps: MetricsWiringDeps): RouterMetrics {
  const { state, pool, fleet, guards, late, connections } = deps;
  return new RouterMetrics({
    inputFaults: deps.inputFaults,
    observerErrors: () => deps.observerFailures.counts(),
    version: ROUTER_VERSION,
    views: () => pool.views(),
    knownModel: (model) => pool.model(model) !== undefined,
    load: deps.load,
    plans: state && {
      models: () => [...pool.catalog().keys()],
      currentVersion: (model) =>
        late.balancing?.store.currentVersion(model) ?? Promise.resolve(null),
      reconciliations: () => late.balancing?.reconciler.counts ?? { reconciled: 0, failed: 0 },
    },
    alerts: deps.alerts,
    leadership: {
      leadership: () => fleet.leadership(),
      refusedPlanCalls: () => late.balancing?.refusedPlanCalls() ?? 0,
    },
    logShipping: deps.logShipping,
    prewarm: () => late.balancing?.prewarm,
    eplb: state && {
      balancer: () => late.balancing?.balancer,
      costs: () => late.balancing?.costs,
      now: () => deps.clock.now(),
    },
    overload: {
      ejections: () => pool.outlier.ejections(),
      excused: () => pool.outlier.excused,
      panic: () => pool.panic(),
      lagMs: () => deps.lag.recentMax(),
      sheds: () => guards.admission.sheds(),
      retries: () => guards.retries,
      retriesRefused: () => guards.budget.refused,
      inFlight: () => guards.admission.inFlight,
      bodyReaders: () => guards.readers.reading,
      connections: () => connections.read?.(),
    },
  });
}
