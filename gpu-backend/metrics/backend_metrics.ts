/**
 * @module The backend's `/metrics`: a private prom-client registry whose every metric is
 * read at scrape time from counters the backend already keeps (load report parts,
 * micro-batcher, executor, engine, placement). Serving requests does no metrics work.
 * Each scrape takes one snapshot of the sources and every metric reads it. Every metric
 * is listed in `docs/METRICS.md`.
 */
import { Registry } from "prom-client";
import type { LoadReport } from "../../shared/load_report.ts";
import type { PlanOwner } from "../../shared/plan_owner.ts";
import {
  buildInfoGauge,
  collectedCounter,
  collectedGauge,
  processMemoryGauges,
  type Sample,
} from "../../shared/metrics/collected.ts";
import type { PartBatchStats } from "../batching/micro_batcher.ts";
import type { ExecutorStats } from "../execution/executor.ts";
import type { EngineStats } from "../engine/engine.ts";
import {
  BATCH_SIZE_BOUNDS,
  formedBatchDistributions,
  queueDelayDistributions,
} from "./batch_distributions.ts";
import { type ExpertDetail, routedTokenSamples } from "./routed_token_samples.ts";
import { ScrapeHistogram } from "./scrape_histogram.ts";
import { PHASE_BOUNDS_S, type PhaseHistogram } from "./phase_histogram.ts";
import type { BackendPhase } from "../timing/request_timing.ts";

/** Plan versions and cold starts of the backend's placement. */
export interface PlacementReading {
  active: number | null;
  staged: number | null;
  coldStarts: number;
  /** The pool and leader term plan calls must come from (null: unclaimed); absent: not read. */
  owner?: PlanOwner | null;
  /** Plan calls refused by the owner check, by reason. */
  refused?: ReadonlyMap<string, number>;
}

/** What the backend's statistics say at one moment. */
export interface BackendSnapshot {
  /** The load report: per-part counters of every hosted part, engine totals, memory. */
  report: LoadReport;
  batches: PartBatchStats[];
  executor: ExecutorStats;
  engine: EngineStats;
  placement: PlacementReading;
}

/** Options of {@linkcode BackendMetrics}. */
export interface BackendMetricsOptions {
  /** Build version (`switchyard_build_info`). */
  version: string;
  /** `metrics.expert_detail`: per-expert, top-N per layer, or per-layer routed-token series. */
  expertDetail: ExpertDetail;
  /** `metrics.top_experts`: N of the `top` detail (default 8). */
  topExperts?: number;
  /** Execution providers tried and abandoned at start-up. */
  providerFallbacks: number;
  /** Reads the sources; called once per scrape. */
  snapshot: () => BackendSnapshot;
  /** Answered requests' phases; `switchyard_backend_request_phase_seconds` when given. */
  phases?: PhaseHistogram<BackendPhase>;
}

/** The backend's metrics registry; {@linkcode BackendMetrics.render} gives `/metrics`. */
export class BackendMetrics {
  /** The private registry (never prom-client's default one). */
  readonly registry: Registry = new Registry();
  readonly #options: BackendMetricsOptions;
  #current: BackendSnapshot | undefined;

  constructor(options: BackendMetricsOptions) {
    this.#options = options;
    const registry = this.registry;
    buildInfoGauge(registry, options.version);
    processMemoryGauges(registry, () => this.#now().report.memory);
    this.#identity();
    this.#routedTokens();
    this.#batching();
    this.#executor();
    this.#engine();
    this.#placement();
    this.#resources();
    this.#requestPhases();
    this.#peerHops();
  }

  /** Content type of the Prometheus text exposition format 0.0.4. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text now, from one snapshot of the sources. */
  async render(): Promise<string> {
    this.#current = this.#options.snapshot();
    return await this.registry.metrics();
  }

  #now(): BackendSnapshot {
    return this.#current ??= this.#options.snapshot();
  }

  #gauge<L extends string>(
    name: string,
    help: string,
    read: (s: BackendSnapshot) => Sample<L>[],
    labelNames: readonly L[] = [],
  ): void {
    collectedGauge(this.registry, { name, help, labelNames, read: () => read(this.#now()) });
  }

  #counter<L extends string>(
    name: string,
    help: string,
    read: (s: BackendSnapshot) => Sample<L>[],
    labelNames: readonly L[] = [],
  ): void {
    collectedCounter(this.registry, { name, help, labelNames, read: () => read(this.#now()) });
  }

  #identity(): void {
    this.#gauge(
      "switchyard_backend_info",
      "Always 1; names this backend (its own id) and the model it serves.",
      (s) => [{ labels: { backend: s.report.backend, model: s.report.model }, value: 1 }],
      ["backend", "model"],
    );
    this.#gauge(
      "switchyard_execution_provider_info",
      "Always 1; the provider label names the active execution provider (cpu, cuda, simulated …).",
      (s) => [{ labels: { provider: s.report.executionProvider }, value: 1 }],
      ["provider"],
    );
    this.#gauge(
      "switchyard_execution_provider_fallbacks",
      "Preferred execution providers that were unavailable at start-up (0: the first one runs).",
      () => [{ labels: {}, value: this.#options.providerFallbacks }],
    );
  }

  #routedTokens(): void {
    const detail = this.#options.expertDetail;
    const samples = (s: BackendSnapshot) =>
      routedTokenSamples(s.report.model, s.report.parts, detail, this.#options.topExperts);
    if (detail === "expert" || detail === "top") {
      const labels = ["model", "layer", "expert"] as const;
      this.#counter(
        "switchyard_expert_tokens_total",
        "Tokens (rows) this backend executed for a routed expert since start" +
          (detail === "top" ? ' (top experts per layer; the rest as expert="other").' : "."),
        (s) => samples(s).tokens,
        labels,
      );
      this.#counter(
        "switchyard_expert_executions_total",
        "Executions (micro-batches) this backend ran for a routed expert since start" +
          (detail === "top" ? ' (top experts per layer; the rest as expert="other").' : "."),
        (s) => samples(s).executions,
        labels,
      );
    } else {
      const labels = ["model", "layer"] as const;
      this.#counter(
        "switchyard_layer_tokens_total",
        "Tokens (rows) this backend executed for the routed experts of a layer since start.",
        (s) => samples(s).tokens,
        labels,
      );
      this.#counter(
        "switchyard_layer_executions_total",
        "Executions (micro-batches) this backend ran for the routed experts of a layer since start.",
        (s) => samples(s).executions,
        labels,
      );
    }
  }

  #batching(): void {
    new ScrapeHistogram(this.registry, {
      name: "switchyard_microbatch_size_groups",
      help: "Request groups coalesced per execution (formed micro-batch size), by part kind.",
      type: "histogram",
      bounds: BATCH_SIZE_BOUNDS,
      read: () => formedBatchDistributions(this.#now().batches),
    });
    new ScrapeHistogram(this.registry, {
      name: "switchyard_batch_queue_delay_seconds",
      help: "Time request groups waited in the micro-batcher before their execution started.",
      type: "summary",
      read: () => queueDelayDistributions(this.#now().batches),
    });
    this.#gauge(
      "switchyard_batch_queued_groups",
      "Request groups waiting in the micro-batcher now, by part kind.",
      (s) => queuedByKind(s.report),
      ["kind"],
    );
  }

  #executor(): void {
    this.#counter(
      "switchyard_executor_busy_seconds_total",
      "Seconds executor slots spent executing since start, summed over slots.",
      (s) => [{ labels: {}, value: s.executor.busyMs / 1000 }],
    );
    this.#gauge(
      "switchyard_executor_slots",
      "Executor slots (Workers or devices) executing in parallel.",
      (s) => [{ labels: {}, value: s.executor.slots }],
    );
    this.#counter(
      "switchyard_executor_executions_total",
      "Executions the executor finished since start.",
      (s) => [{ labels: {}, value: s.executor.executions }],
    );
    this.#counter(
      "switchyard_executor_rows_total",
      "Rows the executor processed since start (all parts: gates, routed and shared experts).",
      (s) => [{ labels: {}, value: s.executor.rows }],
    );
    this.#gauge(
      "switchyard_executor_queued_jobs",
      "Executions waiting for a free executor slot now.",
      (s) => [{ labels: {}, value: s.executor.queued }],
    );
    this.#gauge(
      "switchyard_executor_running_jobs",
      "Executions running now.",
      (s) => [{ labels: {}, value: s.executor.running }],
    );
  }

  #engine(): void {
    this.#counter(
      "switchyard_backend_requests_total",
      "Inference requests this backend completed since start.",
      (s) => [{ labels: {}, value: s.engine.requests }],
    );
    this.#counter(
      "switchyard_backend_rows_total",
      "Token rows of the inference requests this backend completed since start.",
      (s) => [{ labels: {}, value: s.engine.rows }],
    );
    this.#counter(
      "switchyard_backend_rejected_requests_total",
      "Inference requests refused with 503 because backend.max_queued_rows was reached.",
      (s) => [{ labels: {}, value: s.engine.rejected }],
    );
    this.#counter(
      "switchyard_backend_failed_requests_total",
      "Inference requests that failed during the forward pass since start.",
      (s) => [{ labels: {}, value: s.engine.failed }],
    );
    this.#gauge(
      "switchyard_backend_in_flight_requests",
      "Inference requests admitted and not finished now.",
      (s) => [{ labels: {}, value: s.engine.inFlightRequests }],
    );
    this.#gauge(
      "switchyard_backend_in_flight_rows",
      "Token rows of the admitted, unfinished inference requests now.",
      (s) => [{ labels: {}, value: s.engine.inFlightRows }],
    );
  }

  #requestPhases(): void {
    const phases = this.#options.phases;
    if (!phases) return;
    new ScrapeHistogram(this.registry, {
      name: "switchyard_backend_request_phase_seconds",
      help: "Where answered inference requests spent their time in this backend, by phase " +
        "(decode, queue, batch, exec, handoff, hop, hop_hidden, encode, host, total; as in " +
        "their Server-Timing header).",
      type: "histogram",
      bounds: PHASE_BOUNDS_S,
      read: () => phases.distributions(),
    });
  }

  #peerHops(): void {
    const peer = (s: BackendSnapshot) => s.report.peer;
    this.#counter(
      "switchyard_peer_hops_total",
      "Request layers whose rows crossed to peer backends (entry side).",
      (s) => reading(peer(s)?.hops),
    );
    this.#counter(
      "switchyard_peer_rows_total",
      "Unique token rows sent to peers (direction=sent) and served for peers (direction=served).",
      (s) => {
        const p = peer(s);
        return p === undefined ? [] : [
          { labels: { direction: "sent" }, value: p.rowsSent },
          { labels: { direction: "served" }, value: p.rowsServed },
        ];
      },
      ["direction"],
    );
    this.#counter(
      "switchyard_peer_hop_seconds_total",
      "Hop time of crossing layers: wall (send to last answer), exposed (requests waited " +
        "with none of their own local work running), covered (this backend's executor ran " +
        "any work meanwhile) and peer (the peers' serving time).",
      (s) => {
        const p = peer(s);
        return p === undefined ? [] : [
          { labels: { part: "wall" }, value: p.hopMs / 1000 },
          { labels: { part: "exposed" }, value: p.exposedMs / 1000 },
          { labels: { part: "covered" }, value: p.coveredMs / 1000 },
          { labels: { part: "peer" }, value: p.peerServeMs / 1000 },
        ];
      },
      ["part"],
    );
    this.#counter(
      "switchyard_peer_cpu_seconds_total",
      "Host-thread seconds of the peer channel: packing frames and reading answers " +
        "(side=send), decoding peers' frames and answering them (side=serve).",
      (s) => {
        const p = peer(s);
        return p === undefined ? [] : [
          { labels: { side: "send" }, value: p.sendCpuMs / 1000 },
          { labels: { side: "serve" }, value: p.serveCpuMs / 1000 },
        ];
      },
      ["side"],
    );
  }

  #placement(): void {
    const version = (field: "active" | "staged") => (s: BackendSnapshot) => {
      const value = s.placement[field];
      return value === null ? [] : [{ labels: { model: s.report.model }, value }];
    };
    this.#gauge(
      "switchyard_plan_active_version",
      "Version of the placement plan this backend routes with (absent: none).",
      version("active"),
      ["model"],
    );
    this.#gauge(
      "switchyard_plan_staged_version",
      "Last placement plan version staged on this backend (absent: none yet).",
      version("staged"),
      ["model"],
    );
    this.#gauge(
      "switchyard_plan_owner_term",
      "Leader term of the pool this backend takes plans from (label pool; absent: unclaimed).",
      (s) =>
        s.placement.owner
          ? [{ labels: { pool: s.placement.owner.pool }, value: s.placement.owner.term }]
          : [],
      ["pool"],
    );
    this.#counter(
      "switchyard_plan_refused_total",
      "Plan calls refused (409) because they came from another pool, an older term or named none.",
      (s) =>
        ["other_pool", "older_term", "unfenced"].map((reason) => ({
          labels: { reason },
          value: s.placement.refused?.get(reason) ?? 0,
        })),
      ["reason"],
    );
    this.#counter(
      "switchyard_placement_cold_starts_total",
      "Experts loaded on demand because rows arrived before their plan was staged.",
      (s) => [{ labels: {}, value: s.placement.coldStarts }],
    );
    // Residency under backend.memory_budget_mb: budget, warm bytes and any excess.
    const residency = (s: BackendSnapshot) => s.report.residency;
    this.#gauge(
      "switchyard_residency_budget_bytes",
      "backend.memory_budget_mb in bytes (absent: unlimited).",
      (s) => reading(residency(s)?.budgetBytes ?? undefined),
    );
    this.#gauge(
      "switchyard_residency_used_bytes",
      "Bytes of the routed experts warm on this backend now.",
      (s) => reading(residency(s)?.usedBytes),
    );
    this.#gauge(
      "switchyard_residency_excess_bytes",
      "Warm routed-expert bytes above the budget (pinned or busy experts); 0 within it.",
      (s) => {
        const r = residency(s);
        if (r === undefined || r.budgetBytes === null) return [];
        return [{ labels: {}, value: Math.max(0, r.usedBytes - r.budgetBytes) }];
      },
    );
  }
  /** Node resources from the load report; each absent when not readable (never guessed). */
  #resources(): void {
    const resources = (s: BackendSnapshot) => s.report.resources;
    const accelerator = (s: BackendSnapshot) => resources(s)?.accelerator;
    this.#counter(
      "switchyard_process_cpu_seconds_total",
      "CPU time of the backend process since start, user + system, all threads.",
      (s) => {
        const cpuMs = resources(s)?.cpuMs;
        return reading(cpuMs === undefined ? undefined : cpuMs / 1000);
      },
    );
    this.#counter(
      "switchyard_network_receive_bytes_total",
      "Body bytes received: HTTP request bodies and peer WebSocket frames.",
      (s) => reading(resources(s)?.netRxBytes),
    );
    this.#counter(
      "switchyard_network_transmit_bytes_total",
      "Body bytes sent: HTTP response bodies and peer WebSocket frames.",
      (s) => reading(resources(s)?.netTxBytes),
    );
    this.#gauge(
      "switchyard_accelerator_utilisation_ratio",
      "Utilisation (0..1) of this backend's own GPU (nvidia-smi -i; device-wide).",
      (s) => nvidiaSmi(accelerator(s)?.utilisation),
      ["source"],
    );
    this.#gauge(
      "switchyard_accelerator_memory_used_bytes",
      "Memory in use on this backend's own GPU (nvidia-smi -i; device-wide).",
      (s) => nvidiaSmi(accelerator(s)?.memoryUsedBytes),
      ["source"],
    );
    this.#gauge(
      "switchyard_accelerator_memory_total_bytes",
      "Memory of this backend's own GPU (nvidia-smi -i).",
      (s) => nvidiaSmi(accelerator(s)?.memoryTotalBytes),
      ["source"],
    );
    this.#gauge(
      "switchyard_accelerator_power_watts",
      "Power draw of this backend's own GPU (nvidia-smi -i; absent when not readable).",
      (s) => nvidiaSmi(resources(s)?.powerW),
      ["source"],
    );
  }
}

/** One unlabelled sample of a resource reading (0 only when the report has no resources). */
function reading(value: number | undefined): Sample<never>[] {
  return value === undefined ? [] : [{ labels: {}, value }];
}

/**
 * A sample of an `nvidia-smi` reading, none when unreadable: labelled (`source`), so the
 * series disappears instead of reading 0 — a missing number is never made up.
 */
function nvidiaSmi(value: number | null | undefined): Sample<"source">[] {
  return value === null || value === undefined ? [] : [{ labels: { source: "nvidia-smi" }, value }];
}

/** Groups queued now per part kind, every kind of the report listed. */
function queuedByKind(report: LoadReport): Sample<"kind">[] {
  const byKind = new Map<string, number>();
  for (const part of report.parts) {
    byKind.set(part.kind, (byKind.get(part.kind) ?? 0) + part.queueDepth);
  }
  return [...byKind].sort(([a], [b]) => a.localeCompare(b)).map(([kind, value]) => ({
    labels: { kind },
    value,
  }));
}
