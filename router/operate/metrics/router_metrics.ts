/**
 * @module The router's `/metrics`: a private prom-client registry holding the request
 * metrics (fed by {@linkcode RouterMetrics.observer}) and collect-at-scrape metrics
 * about the pool, load, plans, alerts and log shipping. Every metric is listed in
 * `docs/METRICS.md`.
 */
import { type PrewarmCapacitySource, prewarmMetrics } from "./prewarm_metrics.ts";
import { Registry } from "prom-client";
import type { AlertSource } from "../alerts/alert_types.ts";
import type { PoolLoad } from "../../control/load/pool_load.ts";
import type { InferenceObserver } from "../../serve/observe/inference_event.ts";
import type { BackendView } from "../../serve/pool/backend_view.ts";
import { alertMetrics, type LogShippingCounts } from "./alert_metrics.ts";
import {
  buildInfoGauge,
  collectedCounter,
  denoProcessMemory,
  type ProcessMemory,
  processMemoryGauges,
} from "../../../shared/metrics/collected.ts";
import { type PlanVersionSource, poolMetrics } from "./pool_metrics.ts";
import { requestMetrics } from "./request_metrics.ts";
import type { InputFaults } from "../../../shared/input_faults.ts";
import { inputFaultMetrics } from "../../../shared/metrics/input_fault_metrics.ts";
import { type PrewarmAccuracySource, signalMetrics } from "./signal_metrics.ts";
import { overloadMetrics, type OverloadSource } from "./overload_metrics.ts";
import { leaderMetrics, type LeadershipSource } from "./leader_metrics.ts";
import { eplbMetrics, type EplbMetricsSource } from "./eplb_metrics.ts";

/** What {@linkcode RouterMetrics} reads. */
export interface RouterMetricsDeps {
  /** Build version (`switchyard_build_info`). */
  version: string;
  /** Snapshots of the configured backends (health, in-flight). */
  views: () => readonly BackendView[];
  /** Whether a model name is served by the pool (bounds the `model` label). */
  knownModel: (model: string) => boolean;
  /** The pool's load now (the load collector's snapshot). */
  load: () => PoolLoad;
  /** Current plan versions; absent without a plan store. */
  plans?: PlanVersionSource | undefined;
  /** Alert state; absent while no alert evaluator runs. */
  alerts?: AlertSource | undefined;
  /** Log pipeline counters; absent while no log pipeline runs. */
  logShipping?: (() => LogShippingCounts) | undefined;
  /** The pre-warm job (forecast accuracy, capacity contracts); absent when pre-warm is off. */
  prewarm?: () => (PrewarmAccuracySource & PrewarmCapacitySource) | undefined;
  /** Process memory; default `Deno.memoryUsage()`. */
  memory?: () => ProcessMemory;
  /** Bodies that never arrived whole (`switchyard_input_faults_total`). */
  inputFaults?: InputFaults;
  /** Ejections, lag, sheds and retries; absent in tests of other families. */
  overload?: OverloadSource | undefined;
  /** Request observer failures by kind (`ObserverFailures.counts`); absent: not exported. */
  observerErrors?: (() => ReadonlyMap<string, number>) | undefined;
  /** The leader lease as this router sees it; absent: no leader metrics. */
  leadership?: LeadershipSource | undefined;
  /** EPLB health (balancer, hop counters); absent without a balancer (no KV). */
  eplb?: EplbMetricsSource | undefined;
}

/** A `/metrics` body source: the text and its content type. */
export interface MetricsEndpoint {
  readonly contentType: string;
  render(): Promise<string>;
}

/** The router's metrics registry and the observer feeding its request metrics. */
export class RouterMetrics implements MetricsEndpoint {
  /** The private registry (never prom-client's default one). */
  readonly registry: Registry = new Registry();
  /** Counts finished inference requests; pass it in `AppDeps.observers`. */
  readonly observer: InferenceObserver;

  constructor(deps: RouterMetricsDeps) {
    const registry = this.registry;
    buildInfoGauge(registry, deps.version);
    processMemoryGauges(registry, deps.memory ?? denoProcessMemory);
    this.observer = requestMetrics(registry, { knownModel: deps.knownModel });
    poolMetrics(registry, { views: deps.views, load: deps.load, plans: deps.plans });
    alertMetrics(registry, { alerts: deps.alerts, logShipping: deps.logShipping });
    if (deps.inputFaults) inputFaultMetrics(registry, deps.inputFaults);
    const prewarm = deps.prewarm;
    signalMetrics(registry, {
      load: deps.load,
      ...(prewarm
        ? {
          prewarm: {
            accuracy: () => prewarm()?.accuracy() ?? { checked: 0, mape: null, last: null },
          },
        }
        : {}),
    });
    if (prewarm) prewarmMetrics(registry, prewarm);
    if (deps.overload !== undefined) overloadMetrics(registry, deps.overload);
    if (deps.leadership !== undefined) leaderMetrics(registry, deps.leadership);
    if (deps.eplb !== undefined) eplbMetrics(registry, deps.eplb);
    const observerErrors = deps.observerErrors;
    if (observerErrors !== undefined) {
      collectedCounter(registry, {
        name: "switchyard_router_observer_errors_total",
        help: "Exceptions of request observers (request log, metrics, request window, traffic " +
          "recorder) and failures to describe a finished request, by kind; the answer was " +
          "not affected, the observation was lost.",
        labelNames: ["kind"],
        read: () => [...observerErrors()].map(([kind, value]) => ({ labels: { kind }, value })),
      });
    }
  }

  /** Content type of the Prometheus text exposition format 0.0.4. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text now. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
