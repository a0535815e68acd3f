/**
 * @module The reactive (`dynamic`) expert balancer of the pre-warm bench, built the way
 * `startRouter` builds the router's own (`createBalancer` in router/wire/server.ts): the same
 * `Balancer`, a `PlanStore` on the router's KV, a `PlanClient` with the internal token, the
 * pool's members (once every one has named itself) and the model shape from the pool's
 * catalogue; its input is the observed expert load smoothed by an EWMA whose time constant
 * is `expert_balancer.window` (`LoadHistory`, fed from the router's load rounds), and —
 * when a pre-warm job is given — raised to the load that job predicted, exactly as
 * `startRouter` blends its own job in (`PrewarmJob.blendLoad`).
 *
 * Why the bench builds it. `startRouter` blends only the job it creates itself, and that
 * job runs from `Deno.cron` on the real clock; a compressed replay must call the job with
 * simulated time. Building the balancer here lets the runs with and without pre-warm use
 * one identical balancer, differing only in the job. (The router's built-in balancer is
 * then configured `off`, so that it never acts.)
 *
 * Time. The balancer ticks on `clock` — the replay's compressed clock — so
 * `adjust_interval` is given in simulated time (production's 60 s = one real second at 60×)
 * and its decision records carry simulated instants. The load rounds run on real time
 * (every `loadIntervalMs` real ms = `loadIntervalMs × speed` simulated ms), so the EWMA
 * weight is `1 − exp(−loadIntervalMs · speed / window)`: a `window` in simulated time.
 * The plan calls keep real-time timeouts (staging really loads ONNX sessions).
 */
import type { Config } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";
import { Balancer } from "../../router/control/balancer/balancer.ts";
import { PlanClient } from "../../router/control/balancer/plan_client.ts";
import { PlanStore } from "../../router/control/balancer/plan_store.ts";
import { resolvePoolId } from "../../router/control/leader/pool_id.ts";
import { KvLeaseStore } from "../../router/control/leader/lease_store.ts";
import { modelShapeFromMetadata } from "../../router/control/balancer/rebalancer.ts";
import { LoadHistory } from "../../router/control/load/load_history.ts";
import type { PoolLoad } from "../../router/control/load/pool_load.ts";
import { type Clock, systemClock } from "../../router/runtime/clock.ts";
import type { RunningRouter } from "../../router/wire/server.ts";

/** Options of {@linkcode startReactiveBalancer}. */
export interface ReactiveBalancerOptions {
  /** `expert_balancer` (its `adjust_interval` and `window` in simulated ms) and `auth`. */
  config: Config;
  router: Pick<RunningRouter, "pool" | "load">;
  /** The router's KV: plans live there. */
  kv: Deno.Kv;
  /** The replay's simulated clock. */
  clock: Clock;
  /** Simulated ms per real ms. */
  speed: number;
  /** Real ms between the router's load rounds (`startRouter`'s `loadIntervalMs`). */
  loadIntervalMs: number;
  logger: Logger;
  /** The pre-warm job's blend (`PrewarmJob.blendLoad`), in the run with pre-warm. */
  blend?: (model: string, observed: number[][] | null, now: number) => number[][] | null;
}

/** A started reactive balancer; `stop()` ends its ticks and the EWMA feed (idempotent). */
export interface ReactiveBalancer {
  balancer: Balancer;
  store: PlanStore;
  /** EWMA weight of one load round. */
  alpha: number;
  /** The per-expert load the balancer observes (before any blend), as the router's is. */
  observed(model: string): number[][] | null;
  stop(): Promise<void>;
}

/** Per-layer expert load of `model`: the EWMA, else the latest rates (as startRouter). */
export function observedLoad(
  model: string,
  snapshot: PoolLoad,
  ewma: (model: string, layer: number) => number[] | undefined,
): number[][] | null {
  const layers = snapshot.models.find((m) => m.model === model)?.layers;
  if (!layers || layers.length === 0) return null;
  const smoothed = layers.map((layer) => ewma(model, layer.layer));
  if (smoothed.every((v) => v !== undefined)) return smoothed.map((v) => [...v!]);
  return layers.map((layer) => [...layer.expertTokensPerS]);
}

/** Builds and starts the balancer; see the module doc. */
export async function startReactiveBalancer(
  options: ReactiveBalancerOptions,
): Promise<ReactiveBalancer> {
  const { config, router, clock, speed, loadIntervalMs } = options;
  // Evaluations more often than load rounds see nothing new: one per round at the least.
  const settings = {
    ...config.expert_balancer,
    enabled: true,
    strategy: "dynamic" as const,
    evaluate_interval: Math.max(config.expert_balancer.evaluate_interval, loadIntervalMs * speed),
  };
  const alpha = 1 - Math.exp(-(loadIntervalMs * speed) / Math.max(settings.window, 1));
  const historyKv = await Deno.openKv(":memory:");
  const history = new LoadHistory(historyKv, { clock: systemClock, alpha });
  const store = new PlanStore(options.kv);
  // Plan calls carry the router's pool id and lease term, as the router's own do: the
  // backends follow that pool (shared/plan_owner.ts) and would refuse unfenced calls.
  const pool = await resolvePoolId(options.kv, config.state.pool_id);
  const term = (await new KvLeaseStore(options.kv).read()).lease?.term ?? 0;
  const observe = (model: string) =>
    observedLoad(model, router.load.snapshot(), (m, l) => history.ewma(m, l));
  const balancer = new Balancer({
    store,
    client: new PlanClient({
      fetch,
      clock: systemClock,
      ...(config.auth.internal_token ? { internalToken: config.auth.internal_token } : {}),
      owner: () => ({ pool, term }),
    }),
    logger: options.logger,
    clock,
    settings,
    loadSource: (model) => {
      const observed = observe(model);
      return options.blend ? options.blend(model, observed, clock.now()) : observed;
    },
    // Active members only: standby ones join with the plan the pre-warm job activates.
    backends: () => {
      const views = router.pool.views().filter((view) => (view.role ?? "active") === "active");
      if (views.some((view) => typeof view.details?.["backend_id"] !== "string")) return [];
      return views.map(({ name, url }) => ({ id: name, url }));
    },
    modelShape: () => {
      const [entry] = router.pool.catalog().values();
      return entry ? modelShapeFromMetadata(entry.metadata) : null;
    },
    // Memory budgets from the load reports, as the router's own balancer reads them.
    budgets: () =>
      new Map(
        router.load.snapshot().backends.flatMap((b) =>
          b.residency === undefined ? [] : [[b.name, {
            budgetBytes: b.residency.budgetBytes,
            expertBytes: b.residency.expertBytes,
          }]]
        ),
      ),
    decisionsKept: 1000,
  });
  // Every round of the router's collector, once (polled at twice its rate).
  let lastRound = -1;
  let feeding: Promise<void> = Promise.resolve();
  const feed = setInterval(() => {
    const snapshot = router.load.snapshot();
    if (snapshot.at === lastRound || snapshot.models.length === 0) return;
    lastRound = snapshot.at;
    feeding = feeding.then(() => history.recordPool(snapshot)).catch((error) =>
      options.logger.warn("bench load history failed", { error: (error as Error).message })
    );
  }, loadIntervalMs / 2);
  balancer.start();
  let stopping: Promise<void> | undefined;
  return {
    balancer,
    store,
    alpha,
    observed: observe,
    stop() {
      return stopping ??= (async () => {
        clearInterval(feed);
        await balancer.stop();
        await feeding;
        historyKv.close();
      })();
    },
  };
}
