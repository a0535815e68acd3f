/**
 * @module Router metrics about the pool, read at scrape time: backend health and
 * in-flight requests (from the pool), balancedness (across backends: pool, worst layer,
 * per layer) and expert skew (across experts, per layer) from the load collector's
 * {@linkcode PoolLoad} (`control/load/backend_balance.ts` defines both), and the current
 * placement plan version per model.
 * The `*Samples` functions are pure; {@linkcode poolMetrics} registers them.
 */
import type { Registry } from "prom-client";
import type { PoolLoad } from "../../control/load/pool_load.ts";
import type { BackendView } from "../../serve/pool/backend_view.ts";
import {
  collectedCounter,
  collectedGauge,
  type Sample,
} from "../../../shared/metrics/collected.ts";

/** Where the current plan version of each model is read (the balancer's plan store). */
export interface PlanVersionSource {
  /** Models the pool serves. */
  models(): readonly string[];
  /** Current plan version of `model`, or null when none was ever made current. */
  currentVersion(model: string): Promise<number | null>;
  /** Backends brought back onto the current plan, and failed attempts, since start. */
  reconciliations?: () => { reconciled: number; failed: number };
}

/** Options of {@linkcode poolMetrics}. */
export interface PoolMetricsOptions {
  /** Snapshots of the configured backends. */
  views: () => readonly BackendView[];
  /** The pool's load now. */
  load: () => PoolLoad;
  /** Plan versions; absent when the router runs without a plan store. */
  plans?: PlanVersionSource | undefined;
}

/** `backend_up` samples: 1 healthy, 0 not, labelled with the backend's own name. */
export function backendUpSamples(views: readonly BackendView[]): Sample<"backend">[] {
  return views.map((view) => ({ labels: { backend: view.name }, value: view.healthy ? 1 : 0 }));
}

/** In-flight requests the router forwards to each backend. */
export function backendInFlightSamples(views: readonly BackendView[]): Sample<"backend">[] {
  return views.map((view) => ({ labels: { backend: view.name }, value: view.inFlight }));
}

/** Per (model, layer) samples of one layer measure. */
export function layerSamples(
  load: PoolLoad,
  field: "balancedness" | "top10Share" | "cv",
): Sample<"model" | "layer">[] {
  return load.models.flatMap((model) =>
    model.layers.flatMap((layer) =>
      // No routed-expert load in the window: no balancedness to show (not a perfect 1).
      field === "balancedness" && !layer.expertTokensPerS.some((rate) => rate > 0) ? [] : [{
        labels: { model: model.model, layer: layer.layer },
        value: field === "balancedness" ? layer.balancedness : layer.expertSkew[field],
      }]
    )
  );
}

/** Current plan version per model; models without a current plan are left out. */
export async function planVersionSamples(plans: PlanVersionSource): Promise<Sample<"model">[]> {
  const models = plans.models();
  const versions = await Promise.all(models.map((model) => plans.currentVersion(model)));
  return models.flatMap((model, i) => {
    const version = versions[i];
    return version === null || version === undefined ? [] : [{ labels: { model }, value: version }];
  });
}

/** Registers the pool metrics on `registry`. */
export function poolMetrics(registry: Registry, options: PoolMetricsOptions): void {
  const { views, load } = options;
  collectedGauge(registry, {
    name: "switchyard_router_backend_up",
    help: "1 when the backend passed its last health check, else 0.",
    labelNames: ["backend"],
    read: () => backendUpSamples(views()),
  });
  collectedGauge(registry, {
    name: "switchyard_router_backend_in_flight_requests",
    help: "Requests this router is forwarding to the backend now.",
    labelNames: ["backend"],
    read: () => backendInFlightSamples(views()),
  });
  poolLoadMetrics(registry, load);
  layerMetrics(registry, load);
  if (options.plans !== undefined) planMetrics(registry, options.plans);
}

/** The pool's balancedness (expert tokens and utilisation) and its reporting backends. */
function poolLoadMetrics(registry: Registry, load: () => PoolLoad): void {
  const pool = (read: (p: PoolLoad["pool"]) => number | null | undefined) => () => {
    const value = read(load().pool);
    return value === null || value === undefined ? [] : [{ labels: {}, value }];
  };
  collectedGauge(registry, {
    name: "switchyard_pool_balancedness",
    help: "Balancedness: mean / max over reporting backends of the routed-expert tokens/s " +
      "each ran, summed over layers (1 = even).",
    read: pool((p) => p.balancedness),
  });
  collectedGauge(registry, {
    name: "switchyard_pool_worst_layer_balancedness",
    help: "The lowest per-layer balancedness (switchyard_layer_balancedness) of any model.",
    read: pool((p) => p.worstLayer?.balancedness),
  });
  collectedGauge(registry, {
    name: "switchyard_pool_utilisation_balancedness",
    help: "Mean / max of the executor utilisation of the reporting backends (1 = even).",
    read: pool((p) => p.utilisationBalancedness),
  });
  collectedGauge(registry, {
    name: "switchyard_pool_utilisation_cv",
    help: "Coefficient of variation of the executor utilisation of the reporting backends.",
    read: pool((p) => p.utilisationCv),
  });
  collectedGauge(registry, {
    name: "switchyard_pool_backends_reporting",
    help: "Backends with fresh load reports and rates (the ones balancedness counts).",
    read: pool((p) => p.reporting),
  });
}

/** Per layer: balancedness and expert skew (top-10 % share, CV). */
function layerMetrics(registry: Registry, load: () => PoolLoad): void {
  collectedGauge(registry, {
    name: "switchyard_layer_balancedness",
    help: "Balancedness of a layer: mean / max over reporting backends of the routed-expert " +
      "tokens/s each ran in it (what placement evens out; 1 = even).",
    labelNames: ["model", "layer"],
    read: () => layerSamples(load(), "balancedness"),
  });
  collectedGauge(registry, {
    name: "switchyard_layer_expert_skew_top10_share",
    help: "Expert skew: share of a layer's routed tokens on its hottest 10 % of experts.",
    labelNames: ["model", "layer"],
    read: () => layerSamples(load(), "top10Share"),
  });
  collectedGauge(registry, {
    name: "switchyard_layer_expert_skew_cv",
    help: "Expert skew: coefficient of variation of a layer's logical experts' routed tokens/s.",
    labelNames: ["model", "layer"],
    read: () => layerSamples(load(), "cv"),
  });
}

/** The current plan version per model and, where counted, the plan reconciliations. */
function planMetrics(registry: Registry, plans: PlanVersionSource): void {
  collectedGauge(registry, {
    name: "switchyard_plan_current_version",
    help: "Version of the current placement plan of the model (absent: none yet).",
    labelNames: ["model"],
    read: () => planVersionSamples(plans),
  });
  const reconciliations = plans.reconciliations;
  if (reconciliations !== undefined) {
    collectedCounter(registry, {
      name: "switchyard_plan_reconciliations_total",
      help: "Backends found off the current plan (e.g. restarted) and put back on it " +
        '(outcome="reconciled"), and attempts that failed (outcome="failed").',
      labelNames: ["outcome"],
      read: () => {
        const counts = reconciliations();
        return [
          { labels: { outcome: "reconciled" }, value: counts.reconciled },
          { labels: { outcome: "failed" }, value: counts.failed },
        ];
      },
    });
  }
}
