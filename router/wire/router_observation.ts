/**
 * @module Step 2 of wiring a router: what watches the pool — the time series in KV, the
 * dashboard's recent minutes, the doctor's utilisation and request windows, and the alerts.
 * Every load round feeds them (step 3).
 */
import type { AlertManager, AlertStore } from "../operate/alerts/mod.ts";
import { LoadTimeline } from "../operate/dashboard/load_timeline.ts";
import { LoadWindow } from "../operate/dashboard/load_window.ts";
import { UtilisationWindow } from "../operate/doctor/utilisation_window.ts";
import type { PoolLatency } from "../operate/requests/pool_latency.ts";
import { RequestWindow } from "../operate/requests/request_window.ts";
import { createRouterAlerts } from "./router_alerts.ts";
import type { RouterCore } from "./router_core.ts";
import { createRouterSeries, type RouterSeries } from "./series.ts";

/** The router's series, windows and alerts. */
export interface RouterObservation {
  series: RouterSeries;
  timeline: LoadTimeline;
  loadWindow: LoadWindow;
  utilisation: UtilisationWindow;
  requests: RequestWindow;
  alerts: AlertManager;
  alertStore: AlertStore | undefined;
  poolLatency: PoolLatency;
}

/** Creates the series, windows and alerts of the router made of `core`. */
export function wireObservation(core: RouterCore, loadIntervalMs: number): RouterObservation {
  const { config, fleet, clock, logger } = core;
  const fence = fleet.fence;
  const series = createRouterSeries(core.state?.kv, config, {
    clock,
    logger,
    loadIntervalMs,
    shard: fleet.id,
    ...(fence ? { fence: async () => (await fence())?.check ?? null } : {}),
  });
  // The dashboard's recent minutes and the doctor's utilisation, fed by every round.
  const timeline = new LoadTimeline();
  const loadWindow = new LoadWindow();
  const utilisation = new UtilisationWindow();
  // The doctor's latency variation and token rate through this router; the latency SLO.
  const requests = new RequestWindow();
  // Alert rules over every round; KV records and webhook POSTs never block the round.
  // Every router evaluates (its dashboard shows them); only the leader announces.
  const { alerts, store: alertStore, poolLatency } = createRouterAlerts(config, {
    kv: core.state?.kv,
    pool: core.pool,
    fleet,
    requests,
    late: core.late,
    fetch: core.fetch,
    clock,
    logger,
  });
  return {
    series,
    timeline,
    loadWindow,
    utilisation,
    requests,
    alerts,
    alertStore,
    poolLatency,
  };
}
