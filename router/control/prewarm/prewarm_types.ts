/**
 * @module Types of the pre-warm job: the ports it reads (traffic forecast, request-type
 * mix and expert affinity, scheduled events, pool capacity), the balancer and residency
 * calls it makes, the scaler it publishes to, and the decision record it keeps.
 *
 * The ports are deliberately small: `router/control/traffic/`, `router/control/forecast/` and
 * `router/control/events/` are adapted to them in `prewarm_sources.ts`, tests implement them with
 * plain objects.
 */
import type { Logger } from "../../../shared/logger.ts";
import type { PlacementPlan, PlanBackend } from "../../../shared/placement_plan.ts";
import type { PlanPreview, SwitchResult } from "../balancer/balancer_types.ts";
import type { ModelShape } from "../balancer/rebalancer.ts";
import type { CapacitySignals } from "./capacity.ts";

/** One point of a volume forecast: router tokens/s expected at `at` (ms since the epoch). */
export interface VolumePoint {
  at: number;
  tokensPerS: number;
}

/** A volume forecast over the horizon, events NOT included (the job applies them). */
export interface VolumeForecast {
  /** Each point's `at` is the end of the bucket it forecasts. */
  points: VolumePoint[];
  /** Bucket length of the series (ms); absent: unknown (no prediction check). */
  bucketMs?: number;
  /** The forecaster the backtest selected, e.g. `holt_winters`. */
  model: string;
}

/** A scheduled event as the job needs it. */
export interface PrewarmEvent {
  name: string;
  /** ms since the epoch. */
  start: number;
  end: number;
  /** Expected volume multiplier while active (5 = five times the usual load). */
  multiplier: number;
  /** Request-type mix while active (shares, any scale); absent: the observed mix. */
  mix?: Record<string, number> | undefined;
  /** Pre-warm this long before `start` (ms); absent: `prewarm.lead_time`. */
  leadTimeMs?: number | undefined;
}

/**
 * Per request type, per layer, per expert: expert tokens per routed token (a layer's row
 * sums to top-k when every token is counted). `"*"` is the profile of all traffic, used
 * for types without a profile of their own.
 */
export type ExpertAffinity = Record<string, number[][]>;

/** What the job reads about traffic; every method may answer null when it knows nothing. */
export interface TrafficSource {
  /**
   * Forecast of router tokens/s over `(now, now + horizonMs]`, without events: the
   * traffic of `events` (those the job knows, running ones included) is divided out of
   * the history before fitting, as the job applies them itself.
   */
  forecastVolume(
    now: number,
    horizonMs: number,
    events?: readonly PrewarmEvent[],
  ): Promise<VolumeForecast | null>;
  /** Recently observed request-type mix (shares, any scale). */
  observedMix(now: number): Promise<Record<string, number> | null>;
  /** Observed request-type → expert affinity of `model`. */
  affinity(model: string, now: number): Promise<ExpertAffinity | null>;
  /**
   * Observed router tokens/s of `model` over the bucket `[fromMs, toMs)`, once it closed
   * and settled; null when unknown. Absent: predictions are not checked.
   */
  observedTokensPerS?(model: string, fromMs: number, toMs: number): Promise<number | null>;
}

/** Scheduled events. */
export interface EventSource {
  /** Events that have not ended at `now`. */
  upcoming(now: number): Promise<PrewarmEvent[]>;
}

/** The balancer calls the job makes (the real `Balancer` fits). */
export interface PrewarmBalancer {
  modelShape(): ModelShape | null;
  preview(weight: number[][]): Promise<PlanPreview>;
  apply(request: { phy2log: number[][] }, trigger: "prewarm"): Promise<SwitchResult>;
}

/** What one backend answered to `POST /v2/residency/warm`. */
export interface WarmResult {
  backend: string;
  /** Parts asked for, in the order sent (hottest first). */
  requested: string[];
  warmed: string[];
  alreadyWarm: string[];
  evicted: string[];
  skipped: string[];
  /** Why the call failed; the other lists are then empty. */
  error?: string;
}

/** Warms parts on backends; never throws (failures are per backend results). */
export interface ResidencyWarmer {
  warm(backend: PlanBackend, parts: string[]): Promise<WarmResult>;
}

/** A scaling recommendation. */
export interface ScalingRecommendation {
  model: string | null;
  /** Backends in the pool now. */
  current: number;
  /** `ceil(predicted / (capacity · threshold))`, clamped to `[1, max_backends]`. */
  target: number;
  /** Router tokens/s predicted at the peak of the horizon. */
  predictedTokensPerS: number;
  /** Estimated tokens/s one backend sustains. */
  capacityPerBackend: number;
  threshold: number;
  reason: string;
}

/** What a scaler did with a recommendation. */
export interface ScalerOutcome {
  scaler: string;
  /** `reported` (advisory), `sent`, `started`, `unchanged`, or `failed`. */
  status: "reported" | "sent" | "started" | "unchanged" | "failed";
  detail?: string;
  /** URLs of backends the local scaler started. */
  started?: string[];
}

/** A pluggable scaler; `publish` never throws. */
export interface Scaler {
  readonly name: string;
  publish(recommendation: ScalingRecommendation): Promise<ScalerOutcome>;
}

/** The `prewarm` settings the job reads (the resolved config block fits). */
export interface PrewarmSettings {
  enabled: boolean;
  /** ms. */
  horizon: number;
  threshold: number;
  /** Default event lead time (ms). */
  lead_time: number;
  max_backends: number;
}

/** Everything {@linkcode runPrewarm} reads and calls. */
export interface PrewarmDeps {
  settings: PrewarmSettings;
  traffic: TrafficSource;
  events: EventSource;
  balancer: PrewarmBalancer;
  warmer: ResidencyWarmer;
  scaler: Scaler;
  /** Pool members in slot order (configured, healthy or not). */
  backends: () => PlanBackend[];
  /** The current plan of `model`, or null. */
  currentPlan: (model: string) => Promise<PlacementPlan | null>;
  /** The pool's load now (capacity signals), or null when unknown. */
  poolLoad: () => CapacitySignals | null;
  /**
   * The per-expert load the balancer observes for `model` (its detection window), or null.
   * When given, the job plans its placement on max(observed, predicted) per expert — the
   * load the balancer's ticks judge while the pre-warm is in force — so the two loops agree
   * on one placement instead of undoing each other's. Absent: planned on the prediction.
   */
  observedExpertLoad?: (model: string) => number[][] | null;
  /** Top-k of the served model (expert tokens per routed token per layer); default 1. */
  topK?: () => number | null;
  /** Per-backend tokens/s used when no report allows an estimate. */
  capacityFallback?: number | undefined;
  logger: Logger;
}

/** Why the job acted (or did not). */
export type PrewarmTrigger = "overload" | "event_lead" | "none";

/** One run of the job, as `GET /api/prewarm` lists it. */
export interface PrewarmDecision {
  at: number;
  model: string | null;
  trigger: PrewarmTrigger;
  /** `prewarmed`, `kept` (nothing to do), `skipped` (cannot predict), or `error`. */
  outcome: "prewarmed" | "kept" | "skipped" | "error";
  reason: string;
  predicted: {
    /** Peak router tokens/s over the horizon, events included. */
    tokensPerS: number;
    /** When the peak is expected. */
    peakAt: number;
    forecaster: string | null;
    /** Events active or in their lead time. */
    events: string[];
    /** Request-type mix at the peak (shares summing to 1). */
    mix: Record<string, number>;
    /** `[layer][expert]` expert tokens/s at the peak. */
    expertLoad: number[][];
  } | null;
  capacity: {
    perBackendTokensPerS: number | null;
    backends: number;
    source: "reports" | "remembered" | "configured" | "unknown";
  };
  plan: {
    /** Version staged for the predicted load (or the current one that already fits it). */
    version: number | null;
    action: "switched" | "kept_current" | "failed";
    moved: number | null;
    error?: string;
  } | null;
  /** Per backend: parts asked for and what the backend did. */
  warmed: WarmResult[];
  recommendation: ScalingRecommendation | null;
  scaler: ScalerOutcome | null;
  /**
   * The prediction for the bucket this run falls in, and what that bucket later held
   * (filled by the job once it closed): the job's forecast error, visible per decision.
   */
  check?: PredictionCheck | null;
  error?: string;
}

/** Predicted vs later-observed router tokens/s of one traffic bucket. */
export interface PredictionCheck {
  /** The bucket `[from, to)`. */
  from: number;
  to: number;
  predictedTokensPerS: number;
  /** Null until the bucket closed and settled. */
  observedTokensPerS: number | null;
  /** `(predicted − observed) ÷ observed`; null until observed, or when observed is 0. */
  error: number | null;
}
