/**
 * @module The router's time series in Deno KV, fed by every load round and every
 * finished request: the expert-load history (EWMA for the planner), traffic series
 * (volume per model and request type, type → expert affinity: every router its own shard,
 * flushed every second; expert load from the backends' counters: the leader's, continued
 * by the next leader from the cursors in KV), scheduled events, and per-backend
 * efficiency series. None exist without KV.
 */
import type { Config } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";
import { BackendSeries } from "../operate/analysis/backend_series.ts";
import { EventStore } from "../control/events/event_store.ts";
import { LoadHistory } from "../control/load/load_history.ts";
import type { PoolLoad } from "../control/load/pool_load.ts";
import type { InferenceObserver } from "../serve/observe/inference_event.ts";
import type { Clock } from "../runtime/clock.ts";
import { OPEN_BUCKET_FLUSH_MS, TrafficRecorder } from "../control/traffic/traffic_recorder.ts";
import { TrafficStore } from "../control/traffic/traffic_store.ts";
import { ExpertLoadRecorder } from "../control/traffic/expert_load_recorder.ts";
import type { LoadReport } from "../../shared/load_report.ts";

/** The series a router keeps (all `undefined` without KV). */
export interface RouterSeries {
  history: LoadHistory | undefined;
  traffic: TrafficStore | undefined;
  events: EventStore | undefined;
  backends: BackendSeries | undefined;
  /** Observers of finished requests (the traffic recorder; failures count as `traffic_recorder`). */
  observers: InferenceObserver[];
  /** Records one load round into every series (the leader's): the aggregate and the reports. */
  recordRound(load: PoolLoad, reports: readonly LoadReport[]): Promise<void>;
  /** On becoming leader: the pool-wide series continue from the state in KV. */
  lead(): Promise<void>;
  /** On losing the lease: stop writing the pool-wide series (the next leader continues). */
  follow(): void;
  start(): void;
  /** Flushes open buckets. */
  close(): Promise<void>;
}

/** Creates the series over `kv` (none without it). */
export function createRouterSeries(
  kv: Deno.Kv | undefined,
  config: Pick<Config, "expert_balancer" | "traffic">,
  deps: {
    clock: Clock;
    logger: Logger;
    loadIntervalMs: number;
    shard?: string;
    /** The leader lease's check for pool-wide writes; absent: this router always leads. */
    fence?: () => Promise<Deno.AtomicCheck | null>;
  },
): RouterSeries {
  const { clock, logger, loadIntervalMs } = deps;
  if (kv === undefined) {
    return {
      history: undefined,
      traffic: undefined,
      events: undefined,
      backends: undefined,
      observers: [],
      recordRound: () => Promise.resolve(),
      lead: () => Promise.resolve(),
      follow() {},
      start() {},
      close: () => Promise.resolve(),
    };
  }
  // The planner sees an EWMA whose time constant is `expert_balancer.window`.
  const alpha = 1 - Math.exp(-loadIntervalMs / Math.max(config.expert_balancer.window, 1));
  const history = new LoadHistory(kv, { clock, alpha });
  const bucket = { bucketMs: config.traffic.bucket, retentionMs: config.traffic.retention };
  // Each router adds its requests under its own shard of a bucket: no write contention.
  const traffic = new TrafficStore(kv, {
    clock,
    ...bucket,
    ...(deps.shard ? { shard: deps.shard } : {}),
  });
  // Open buckets are flushed every second too: a router that dies loses at most that much.
  const recorder = new TrafficRecorder(traffic, {
    clock,
    logger,
    roundIntervalMs: loadIntervalMs,
    flushEveryMs: OPEN_BUCKET_FLUSH_MS,
  });
  // Pool-wide expert load from the backends' counters, fenced by the lease.
  const expertLoad = new ExpertLoadRecorder({
    kv,
    store: traffic,
    clock,
    logger,
    ...(deps.fence ? { fence: deps.fence } : {}),
  });
  const backends = new BackendSeries(kv, {
    clock,
    logger,
    ...bucket,
    roundIntervalMs: loadIntervalMs,
  });
  return {
    history,
    traffic,
    events: new EventStore(kv),
    backends,
    observers: [recorder.observer],
    async recordRound(load, reports) {
      expertLoad.record(reports);
      backends.recordRound(load);
      await history.recordPool(load);
    },
    lead: () => expertLoad.resume(),
    follow: () => expertLoad.pause(),
    start: () => recorder.start(),
    async close() {
      await recorder.close();
      await expertLoad.close();
      await backends.close();
    },
  };
}
