/**
 * @module The wired router's lifecycle: `start()` starts discovery, the lease, health
 * checks, load polling, series and — on the leader only — the balancer and the pre-warm
 * job; `stop()` stops everything started, in reverse; `runCron()` is the pre-warm job's
 * scheduled body.
 */
import type { Logger } from "../../shared/logger.ts";
import type { AlertManager, AlertStore } from "../operate/alerts/mod.ts";
import type { PoolLatency } from "../operate/requests/pool_latency.ts";
import type { LoadCollector } from "../control/load/load_collector.ts";
import type { PoolLoad } from "../control/load/pool_load.ts";
import { registerPrewarmCron } from "../control/prewarm/prewarm_job.ts";
import { missedCronRun } from "../control/prewarm/prewarm_history.ts";
import type { LoopLagMonitor } from "../serve/health/loop_lag.ts";
import type { BackendPool } from "../serve/pool/backend_pool.ts";
import type { Clock } from "../runtime/clock.ts";
import type { LatestRunner } from "../runtime/latest_runner.ts";
import type { Balancing } from "./balancing.ts";
import type { Fleet } from "./fleet.ts";
import type { OperatorApi } from "./operator_api.ts";
import type { RouterSeries } from "./series.ts";
import type { StateKv } from "./state_kv.ts";

/** The parts {@linkcode routerLifecycle} starts and stops. */
export interface RouterLifecycleParts {
  state: StateKv | undefined;
  fleet: Fleet;
  pool: BackendPool;
  lag: LoopLagMonitor;
  collector: LoadCollector;
  leaderRounds: LatestRunner<PoolLoad>;
  series: RouterSeries;
  poolLatency: PoolLatency;
  alerts: AlertManager;
  alertStore: AlertStore | undefined;
  balancing: Balancing | undefined;
  operatorApi: OperatorApi;
  /** The inference hop's client. */
  hop: { close(): void };
  /** Registers the pre-warm job with `Deno.cron`. */
  registerCron: boolean;
  clock: Clock;
  logger: Logger;
}

/** The router's start, stop and scheduled run. */
export interface RouterLifecycle {
  start(): Promise<void>;
  /** Idempotent; flushes the series. */
  stop(): Promise<void>;
  runCron(now?: number): Promise<"ran" | "follower" | "disabled">;
}

/** The lifecycle of the router made of `parts`. */
export function routerLifecycle(parts: RouterLifecycleParts): RouterLifecycle {
  const { fleet, series, balancing, alerts, alertStore, clock, logger } = parts;
  const prewarm = balancing?.prewarm;
  const runCron = async (now = clock.now()) => {
    if (prewarm === undefined) return "disabled" as const;
    if (!fleet.isLeader()) return "follower" as const;
    await prewarm.run(now);
    return "ran" as const;
  };
  // A new leader runs the pre-warm job at once when a cron minute passed since the last
  // run (or, with none recorded, since the previous leader's term began): a dead leader
  // holding the lease over a minute boundary ran nothing.
  const runMissedCron = async () => {
    if (prewarm === undefined) return;
    const now = clock.now();
    const since = prewarm.lastRunAt() ?? await fleet.previousTermSince();
    if (!missedCronRun(since, now)) return;
    logger.info("prewarm run missed while nobody led: running it now", {
      event: "leader",
      since,
    });
    await runCron(now);
  };
  let stopCron: (() => void) | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () => stopping ??= stopAll(parts, () => stopCron?.());
  async function start() {
    parts.lag.start();
    await fleet.start();
    await parts.pool.start();
    void parts.collector.start();
    series.start();
    parts.poolLatency.start();
    // The balancer ticks on the leader only; a new leader continues the alerts it finds.
    fleet.whileLeader(async () => {
      if (alertStore) alerts.resume(await alertStore.list());
      await series.lead();
      await prewarm?.resume();
      balancing?.start();
      await runMissedCron();
    }, () => {
      series.follow();
      return balancing?.stop();
    });
    if (prewarm && parts.registerCron) {
      stopCron = registerPrewarmCron({ run: (now) => runCron(now) }, {
        now: () => clock.now(),
        logger,
      });
    }
  }
  return { start, stop, runCron };
}

/** Stops every part, the cron first and the state KV (when the router owns it) last. */
async function stopAll(parts: RouterLifecycleParts, stopCron: () => void): Promise<void> {
  stopCron();
  await parts.operatorApi.close();
  await parts.balancing?.stop();
  await parts.collector.stop();
  await parts.leaderRounds.settled();
  await parts.alerts.settled();
  await parts.poolLatency.stop();
  await parts.series.close();
  await parts.fleet.stop();
  await parts.pool.stop();
  parts.hop.close();
  parts.lag.stop();
  if (parts.state?.owned) parts.state.kv.close();
}
