/**
 * @module The pool's load at one moment, aggregated from each backend's latest report
 * and rates: per backend, per (model, layer) the expert tokens/s vector summed over the
 * backends hosting each logical expert, balancedness (across backends) per layer and for
 * the pool with its worst layer, and expert skew (across experts) per layer
 * (`backend_balance.ts` defines both).
 *
 * Only fresh backends (their last poll succeeded, within `staleAfterMs`) with rates
 * (two reports of one run) count towards sums and balancedness; stale ones are still
 * listed, with their last error and age, so an operator sees why.
 */
import type { AcceleratorReading, LoadReport, PeerReport } from "../../../shared/load_report.ts";
import { balancedness, coefficientOfVariation } from "../../../shared/balancedness.ts";
import {
  type ExpertSkew,
  expertSkew,
  layerBalancedness,
  poolBalancedness,
  type WorstLayer,
  worstLayer,
} from "./backend_balance.ts";
import type { ReportRates } from "./load_rates.ts";
import { attributePower } from "./power_attribution.ts";
import {
  type ColdStartHistory,
  coldStartTotal,
  recentColdStartsPerMin,
} from "./cold_start_window.ts";
import {
  backendCapacity,
  type CapacityEstimate,
  type CapacityMemory,
  poolCapacityPerBackend,
  poolSaturation,
  type Saturation,
  saturationOf,
  type ScaleAdvice,
  scaleAdvice,
} from "./saturation.ts";

/** What the collector knows about one backend. */
export interface BackendLoadSample {
  /** Pool id (`host:port`). */
  id: string;
  /** Its own id, when known. */
  name: string;
  /** Latest report, if any arrived. */
  report: LoadReport | undefined;
  /** Rates between the latest two reports of one run. */
  rates: ReportRates | undefined;
  /** When the latest report arrived (router clock ms). */
  receivedAt: number | undefined;
  /** Why the last poll failed; `undefined` when it succeeded. */
  error: string | undefined;
}

/** One backend in {@linkcode PoolLoad}. */
export interface BackendLoad {
  id: string;
  name: string;
  model: string | undefined;
  /** No usable report: never reported, last poll failed, or too old. */
  stale: boolean;
  error: string | undefined;
  /** Milliseconds since its latest report arrived. */
  reportAgeMs: number | undefined;
  /** From rates; `undefined` until two reports of one run arrived. */
  utilisation: number | undefined;
  tokensPerS: number | undefined;
  requestsPerS: number | undefined;
  /** From the latest report (all routers' requests, not only this one's). */
  inFlight: number | undefined;
  inFlightRows: number | undefined;
  /** Groups queued over all parts. */
  queueDepth: number | undefined;
  /** Requests refused (503) per second by the backend's admission. */
  shedPerS?: number | undefined;
  /** Mean queue wait per group beyond the batching window, and mean execution (ms). */
  queueWaitMs?: number | undefined;
  serviceMs?: number | undefined;
  /** The load signal (`saturation.ts`); `undefined` until two reports of one run arrived. */
  saturation?: Saturation | undefined;
  /** Tokens/s this backend can serve (`saturation.ts`); `undefined` when unknown. */
  capacity?: CapacityEstimate | undefined;
  /** Routed-expert memory budget, bytes used and largest expert, from its latest report. */
  residency?: LoadReport["residency"];
  /** Cold starts since the backend started (latest report); `undefined` not reported. */
  coldStarts?: number | undefined;
  /** Cold starts per minute over the last minute (`cold_start_window.ts`). */
  coldStartsPerMin?: number | undefined;
  slots: number | undefined;
  executionProvider: string | undefined;
  memory: LoadReport["memory"] | undefined;
  /** CPU cores the process used; `undefined` without resource rates. */
  cpuCores: number | undefined;
  /** Network body bytes/s received and sent; `undefined` without resource rates. */
  netRxBytesPerS: number | undefined;
  netTxBytesPerS: number | undefined;
  /** Latest accelerator reading: `null` none readable there, `undefined` not reported. */
  accelerator: AcceleratorReading | null | undefined;
  /**
   * Accelerator power attributed to this backend (W): its device's power split among the
   * backends reading that device (`power_attribution.ts`); `null` not readable there,
   * `undefined` not reported.
   */
  powerW: number | null | undefined;
  /** Plan versions active and staged there (latest report); `undefined` not reported. */
  plan: LoadReport["plan"];
  /**
   * Peer-hop counters over the latest report interval (Δ, `load_rates.ts`) and the time
   * of the report that ended it, so a window counts each interval once; `undefined`
   * without rates or peer counters.
   */
  peer?: { at: number; delta: PeerReport } | undefined;
  /**
   * Routed-expert tokens/s of the experts hosted here, per layer of its model; index =
   * logical expert, 0 where not hosted, as long as the pool's layer vector.
   */
  expertLayers: BackendLayerLoad[] | undefined;
}

/** One backend's routed-expert load in one layer (the replicas view, hot-expert alerts). */
export interface BackendLayerLoad {
  layer: number;
  /** `[expert]` → tokens/s this backend ran for that logical expert. */
  expertTokensPerS: number[];
  /** `[expert]` → device ms per second this backend spent on it. */
  expertBusyMsPerS: number[];
}

/** Expert load of one MoE layer. */
export interface LayerLoad {
  layer: number;
  /** `[expert]` → tokens/s routed to that logical expert, all backends together. */
  expertTokensPerS: number[];
  /** Mean ÷ max over fresh backends of their expert tokens/s in this layer. */
  balancedness: number;
  /** How unevenly the tokens spread over the layer's experts. */
  expertSkew: ExpertSkew;
}

/** Expert load of one model, layer by layer. */
export interface ModelLoad {
  model: string;
  layers: LayerLoad[];
  /** Pool balancedness over this model's backends (work summed over layers). */
  balancedness?: number;
  /** This model's lowest per-layer balancedness; null without layers. */
  worstLayer?: WorstLayer | null;
}

/** The aggregate the router serves at `GET /api/load` and feeds to history. */
export interface PoolLoad {
  /** Router clock ms. */
  at: number;
  backends: BackendLoad[];
  models: ModelLoad[];
  pool: {
    /** Fresh backends with rates. */
    reporting: number;
    /**
     * Balancedness: mean ÷ max of their routed-expert tokens/s summed over layers
     * (`backend_balance.ts`).
     */
    balancedness: number;
    /** The lowest per-layer balancedness over every model; null without layers. */
    worstLayer?: WorstLayer | null;
    /** Mean ÷ max and coefficient of variation of their executor utilisations. */
    utilisationBalancedness: number;
    utilisationCv: number;
    /** Mean saturation of fresh backends; `undefined` when none reports rates. */
    saturation?: number | undefined;
    /** Highest saturation of a fresh backend. */
    saturationMax?: number | undefined;
    /** Median capacity of one backend (tokens/s); `undefined` when unknown. */
    capacityPerBackend?: number | undefined;
    /** The scaling rule's advice from the same signal. */
    scale?: ScaleAdvice | undefined;
    /** Requests this router shed itself per second (pool at its in-flight limits). */
    routerShedPerS?: number | undefined;
  };
}

/** Options of {@linkcode aggregatePoolLoad}. */
export interface AggregateOptions {
  /** Router clock ms. */
  now: number;
  /** A report older than this is stale. */
  staleAfterMs: number;
  /** Capacities measured at saturation earlier (`saturation.ts`); default none. */
  capacityMemory?: CapacityMemory;
  /** Cold-start totals of recent rounds per backend (`cold_start_window.ts`); default none. */
  coldStarts?: ColdStartHistory;
  /** Utilisation the scaling advice plans for; default 0.8 (`prewarm.threshold`). */
  scaleTarget?: number;
  /** Most backends the scaling advice recommends; default 8 (`prewarm.max_backends`). */
  maxBackends?: number;
  /** Requests this router shed (429, pool at its limits) and admitted per second. */
  router?: { shedPerS: number; admittedPerS: number };
}

/** Whether a sample is fresh: its last poll succeeded and its report is recent. */
export function isFresh(sample: BackendLoadSample, options: AggregateOptions): boolean {
  return sample.report !== undefined && sample.error === undefined &&
    sample.receivedAt !== undefined && options.now - sample.receivedAt <= options.staleAfterMs;
}

function backendLoad(sample: BackendLoadSample, options: AggregateOptions): BackendLoad {
  const { report, rates } = sample;
  const fresh = isFresh(sample, options);
  const saturation = rates && saturationOf({
    deviceBusy: rates.backend.utilisation,
    hostBusy: rates.host?.hostBusy,
    queueWaitMs: rates.host?.queueWaitMs,
    serviceMs: rates.host?.serviceMs,
    admittedPerS: rates.backend.requestsPerS,
    shedPerS: rates.backend.rejectedPerS,
  });
  const capacity = fresh
    ? backendCapacity(
      { id: sample.id, saturation: saturation?.value, tokensPerS: rates?.backend.tokensPerS },
      options.capacityMemory ?? new Map(),
    )
    : undefined;
  return {
    id: sample.id,
    name: report?.backend ?? sample.name,
    model: report?.model,
    stale: !fresh,
    error: sample.error,
    reportAgeMs: sample.receivedAt === undefined ? undefined : options.now - sample.receivedAt,
    utilisation: rates?.backend.utilisation,
    tokensPerS: rates?.backend.tokensPerS,
    requestsPerS: rates?.backend.requestsPerS,
    inFlight: report?.inFlightRequests,
    inFlightRows: report?.inFlightRows,
    queueDepth: report?.parts.reduce((sum, part) => sum + part.queueDepth, 0),
    shedPerS: rates?.backend.rejectedPerS,
    queueWaitMs: rates?.host?.queueWaitMs,
    serviceMs: rates?.host?.serviceMs,
    saturation,
    capacity,
    residency: report?.residency,
    coldStarts: coldStartTotal(report),
    coldStartsPerMin: recentColdStartsPerMin(options.coldStarts?.get(sample.id)),
    slots: report?.slots,
    executionProvider: report?.executionProvider,
    memory: report?.memory,
    cpuCores: rates?.resources?.cpuCores,
    netRxBytesPerS: rates?.resources?.netRxBytesPerS,
    netTxBytesPerS: rates?.resources?.netTxBytesPerS,
    accelerator: report?.resources?.accelerator,
    powerW: report?.resources?.powerW,
    plan: report?.plan,
    ...(report && rates?.peer ? { peer: { at: report.at, delta: rates.peer } } : {}),
    expertLayers: rates && backendExpertLayers(rates),
  };
}

/** Routed-expert tokens/s per layer of one backend's rates, in layer order. */
function backendExpertLayers(rates: ReportRates): BackendLayerLoad[] {
  const layers = new Map<number, BackendLayerLoad>();
  for (const part of rates.parts) {
    if (part.kind !== "expert") continue;
    let load = layers.get(part.layer);
    if (load === undefined) {
      load = { layer: part.layer, expertTokensPerS: [], expertBusyMsPerS: [] };
      layers.set(part.layer, load);
    }
    padTo(load, part.expert + 1);
    load.expertTokensPerS[part.expert]! += part.tokensPerS;
    load.expertBusyMsPerS[part.expert]! += part.busyMsPerS;
  }
  return [...layers.values()].sort((a, b) => a.layer - b.layer);
}

function padTo(load: BackendLayerLoad, length: number): void {
  while (load.expertTokensPerS.length < length) load.expertTokensPerS.push(0);
  while (load.expertBusyMsPerS.length < length) load.expertBusyMsPerS.push(0);
}

/** Pads each backend's layer vectors with zeros to its model's layer length. */
function padExpertLayers(backends: BackendLoad[], models: readonly ModelLoad[]): void {
  for (const backend of backends) {
    const layers = models.find((m) => m.model === backend.model)?.layers;
    for (const own of backend.expertLayers ?? []) {
      padTo(own, layers?.find((l) => l.layer === own.layer)?.expertTokensPerS.length ?? 0);
    }
  }
}

/** Sums routed-expert token rates per (model, layer, expert) over `samples`. */
function expertLoads(
  samples: readonly BackendLoadSample[],
  backends: readonly BackendLoad[],
): ModelLoad[] {
  // Step 1: model → layer → expert → tokens/s, over every backend hosting the expert.
  const sums = new Map<string, Map<number, number[]>>();
  for (const { report, rates } of samples) {
    if (report === undefined || rates === undefined) continue;
    let layers = sums.get(report.model);
    if (layers === undefined) sums.set(report.model, layers = new Map());
    for (const part of rates.parts) {
      if (part.kind !== "expert") continue;
      let vector = layers.get(part.layer);
      if (vector === undefined) layers.set(part.layer, vector = []);
      while (vector.length <= part.expert) vector.push(0);
      vector[part.expert]! += part.tokensPerS;
    }
  }
  // Step 2: balancedness and expert skew per layer, in model and layer order.
  return [...sums.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([model, layers]) => {
    const rows = [...layers.entries()].sort(([a], [b]) => a - b).map(([layer, vector]) => ({
      layer,
      expertTokensPerS: vector,
      balancedness: layerBalancedness(backends, model, layer),
      expertSkew: expertSkew(vector),
    }));
    return {
      model,
      layers: rows,
      balancedness: poolBalancedness(backends, model),
      worstLayer: worstLayer(rows.map((row) => ({ model, ...row }))),
    };
  });
}

/** Aggregates the collector's samples into the pool's load now. */
export function aggregatePoolLoad(
  samples: readonly BackendLoadSample[],
  options: AggregateOptions,
): PoolLoad {
  const usable = samples.filter((sample) => isFresh(sample, options) && sample.rates !== undefined);
  const utilisations = usable.map((sample) => sample.rates!.backend.utilisation);
  // A GPU several backends share is attributed once, split among them.
  const backends = attributePower(samples.map((sample) => backendLoad(sample, options)));
  const models = expertLoads(usable, backends);
  padExpertLayers(backends, models);
  const signal = backends.filter((b) => !b.stale && b.saturation !== undefined);
  const saturations = signal.map((b) => b.saturation!.value);
  return {
    at: options.now,
    backends,
    models,
    pool: {
      reporting: usable.length,
      balancedness: poolBalancedness(backends),
      worstLayer: worstLayer(
        models.flatMap((m) => m.layers.map((layer) => ({ model: m.model, ...layer }))),
      ),
      utilisationBalancedness: balancedness(utilisations),
      utilisationCv: coefficientOfVariation(utilisations),
      saturation: poolSaturation(saturations, options.router),
      routerShedPerS: options.router?.shedPerS,
      saturationMax: saturations.length === 0 ? undefined : Math.max(...saturations),
      capacityPerBackend: poolCapacityPerBackend(backends.map((b) => b.capacity)),
      scale: scaleAdvice(
        signal.map((b) => ({
          saturation: b.saturation!.value,
          admittedPerS: b.requestsPerS ?? 0,
          shedPerS: b.shedPerS ?? 0,
        })),
        {
          target: options.scaleTarget ?? 0.8,
          maxBackends: options.maxBackends ?? 8,
          ...(options.router ? { router: options.router } : {}),
        },
      ),
    },
  };
}
