/**
 * @module Step 3 of wiring a router: the load collector's rounds. Each round feeds the
 * costs, alerts, dashboard windows and the advisor at once; the leader's pool-wide work
 * (series, replica weights, the views followers read) runs beside the rounds, latest round
 * first, so a slow KV write or backend call never delays alerts or the dashboard.
 */
import { LoadCollector } from "../control/load/load_collector.ts";
import type { PoolLoad } from "../control/load/pool_load.ts";
import { LatestRunner } from "../runtime/latest_runner.ts";
import type { RouterCore } from "./router_core.ts";
import type { RouterObservation } from "./router_observation.ts";

/** The collector and the leader's work on its rounds. */
export interface LoadRounds {
  collector: LoadCollector;
  leaderRounds: LatestRunner<PoolLoad>;
}

/** Creates the load collector of the router made of `core`, polling every `intervalMs`. */
export function createLoadRounds(
  core: RouterCore,
  observed: RouterObservation,
  intervalMs: number,
): LoadRounds {
  const { config, guards, fleet, late, logger } = core;
  const collector = new LoadCollector(core.pool, {
    fetch: core.fetch,
    clock: core.clock,
    logger,
    internalToken: config.auth.internal_token,
    intervalMs,
    scaleTarget: config.prewarm.threshold,
    maxBackends: config.prewarm.max_backends ?? 1024,
    // Requests this router shed because the pool was at its limits: saturation too.
    routerCounts: () => {
      const sheds = guards.admission.sheds();
      const full = (sheds.get("router_full") ?? 0) + (sheds.get("backends_full") ?? 0);
      const admitted = guards.admission.admitted;
      return { shed: full, admitted: Math.max(0, admitted) };
    },
    onRound: (load) => {
      late.balancing?.costs.record(load);
      observed.alerts.onRound(load);
      observed.timeline.record(load);
      observed.loadWindow.record(load);
      observed.utilisation.record(load);
      late.operatorApi?.onRound(load);
      // Pool-wide series, replica weights and the views followers read: the leader's, beside
      // the rounds (a slow KV write or backend call never delays alerts or the dashboard).
      if (fleet.isLeader()) leaderRounds.offer(load);
    },
  });
  const leaderRounds = new LatestRunner<PoolLoad>(async (load) => {
    if (!fleet.isLeader()) return;
    await observed.series.recordRound(load, collector.latestReports());
    await late.balancing?.onRound(load);
    await fleet.views?.publish((path) => Promise.resolve(core.inProcess(path)));
  }, (error) => logger.warn("leader round failed", { error: (error as Error).message }));
  return { collector, leaderRounds };
}
