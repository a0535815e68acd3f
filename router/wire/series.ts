/**
 * @module The router's time series in Deno KV, fed by every load round and every
 * finished request: the expert-load history (EWMA for the planner), traffic series
 * (volume per model and request type, expert load, type → expert affinity), scheduled
 * events, and per-backend efficiency series. None exist without KV.
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

/** The series a router keeps (all `undefined` without KV). */
export interface RouterSeries {
  history: LoadHistory | undefined;
  traffic: TrafficStore | undefined;
  events: EventStore | undefined;
  backends: BackendSeries | undefined;
  /** Observers of finished requests (the traffic recorder; failures count as `traffic_recorder`). */
  observers: InferenceObserver[];
  /** Records one load round into every series. */
  recordRound(load: PoolLoad): Promise<void>;
  start(): void;
  /** Flushes open buckets. */
  close(): Promise<void>;
}

/** Creates the series over `kv` (none without it). */
export function createRouterSeries(
  kv: Deno.Kv | undefined,
  config: Config,
  deps: { clock: Clock; logger: Logger; loadIntervalMs: number; shard?: string },
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
  // Open buckets are flushed every 2 s too: a router that dies loses at most that much.
  const recorder = new TrafficRecorder(traffic, {
    clock,
    logger,
    roundIntervalMs: loadIntervalMs,
    flushEveryMs: OPEN_BUCKET_FLUSH_MS,
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
    async recordRound(load) {
      recorder.recordRound(load);
      backends.recordRound(load);
      await history.recordPool(load);
    },
    start: () => recorder.start(),
    async close() {
      await recorder.close();
      await backends.close();
    },
  };
}
