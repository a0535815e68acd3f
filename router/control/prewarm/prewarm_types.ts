/**
 * @module Types of the pre-warm job: the ports it reads (traffic forecast, request-type
 * mix and expert affinity, scheduled events, pool capacity), the balancer, placement and
 * pool calls it makes, the scalers it asks for capacity, and the decision record it keeps.
 *
 * The ports are deliberately small: `router/control/traffic/`, `router/control/forecast/` and
 * `router/control/events/` are adapted to them in `prewarm_sources.ts`, tests implement them with
 * plain objects.
 */
import type { Logger } from "../../../shared/logger.ts";
import type { PlacementPlan, PlanBackend } from "../../../shared/placement_plan.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { BackendRole } from "../../serve/pool/backend_view.ts";
import type { SwitchResult } from "../balancer/balancer_types.ts";
import type { StageOutcome } from "../balancer/plan_switch.ts";
import type { ModelShape, UnversionedPlan } from "../balancer/rebalancer.ts";
import type { CapacitySignals } from "./capacity.ts";
import type { CapacityPlan } from "./capacity_plan.ts";
import type { ContractSummary, MemberCounts } from "./capacity_contract.ts";
import type { LeadTime } from "./lead_time.ts";
import type { PrewarmEvent } from "../events/event_store.ts";

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

/** A scheduled event as the job needs it (the event store's view). */
export type { PrewarmEvent };

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
export interface EventCalendar {
  /** Events that have not ended at `now`. */
  upcoming(now: number): Promise<PrewarmEvent[]>;
}

/** The balancer calls the job makes (the real `Balancer` fits). */
export interface PrewarmBalancer {
  modelShape(): ModelShape | null;
  /** Activates a version staged earlier; `beforeClaim` runs first, in turn with ticks. */
  activateStaged(
    plan: PlacementPlan,
    options: { trigger?: "prewarm"; beforeClaim?: () => void },
  ): Promise<SwitchResult>;
}

/** Placement for a pool the job is preparing (the balancer's planner and plan switch). */
export interface PlacementPort {
  /**
   * The planner's placement of `load` (`[layer][expert]` tokens/s) over `backends`
   * within their memory budgets; throws a `BalancerError` when it cannot.
   */
  propose(load: number[][], backends: readonly PlanBackend[]): UnversionedPlan;
  /** Saves a new version and stages it on its backends, not current (`stagePlan()`). */
  stage(placement: UnversionedPlan): Promise<StageOutcome>;
}

/** A backend as the job sees the pool (`BackendView` fits). */
export interface PoolMember {
  /** The backend's own id (`name`), as plans name it. */
  name: string;
  url: string;
  healthy: boolean;
  role?: BackendRole | undefined;
  inFlight: number;
  /** Models it serves; empty until described. */
  models: readonly string[];
  details: Readonly<Record<string, unknown>> | undefined;
}

/** The pool calls the job makes (`BackendPool` fits). */
export interface PoolPort {
  views(): readonly PoolMember[];
  add(url: string, options: { role?: BackendRole }): boolean;
  setRole(url: string, role: BackendRole): boolean;
  remove(url: string): boolean;
  /** The role of members added without one (discovery's); undefined: active. */
  admitAs(rule: ((url: string) => BackendRole) | undefined): void;
}

/** What the job asks a scaler for: `target` backends, ready by `readyBy`. */
export interface ScaleRequest {
  model: string | null;
  /** The contract this belongs to (`c1`, …), or null (a scale-down outside one). */
  contract: string | null;
  /** Backends the pool has or was promised before this request. */
  current: number;
  /** Backends wanted. */
  target: number;
  /** When they must be ready (ms since the epoch); null: no deadline (scaling down). */
  readyBy: number | null;
  /** URLs of drained backends to stop (scaling down); empty otherwise. */
  remove: string[];
  /** Router tokens/s the target is sized for, and per backend; null when unknown. */
  predictedTokensPerS: number | null;
  capacityPerBackend: number | null;
  threshold: number;
  reason: string;
}

/** What a scaler did with a request. */
export interface ScalerOutcome {
  scaler: string;
  /**
   * `reported` (advisory: nothing done), `published` (the desired count is readable),
   * `sent` (webhook accepted), `requested` (the launcher starts or stops backends),
   * `unchanged`, or `failed`.
   */
  status: "reported" | "published" | "sent" | "requested" | "unchanged" | "failed";
  detail?: string;
  /** URLs of backends started for this request (scalers that know them). */
  started?: string[];
  /** URLs stopped. */
  removed?: string[];
}

/** A backend a scaler started and reports ready, with its own start times. */
export interface ScaledBackend {
  url: string;
  /** When it was asked for, and when it was ready (ms since the epoch). */
  requestedAt: number;
  readyAt: number;
}

/** A pluggable scaler; no method throws (failures are outcomes). */
export interface Scaler {
  readonly name: string;
  /** Whether it adds and removes backends; the advisory scaler does not. */
  readonly acts: boolean;
  scale(request: ScaleRequest): Promise<ScalerOutcome>;
  /**
   * Backends it started that are ready now (scalers that start them: `local`); the job
   * adds them to the pool. Absent: new backends join through discovery.
   */
  ready?(): Promise<ScaledBackend[]>;
  /** The desired backend count it publishes (`kubernetes`), if it publishes one. */
  desired?(): number | null;
}

/** The `prewarm` settings the job reads (the resolved config block fits). */
export interface PrewarmSettings {
  enabled: boolean;
  /** ms. */
  horizon: number;
  threshold: number;
  /** Lead time before any cold start was measured (ms). */
  lead_time: number;
  cold_start_percentile?: number;
  lead_margin?: number;
  /** Tokens/s per backend when known; unset: estimated from load reports. */
  capacity_per_backend?: number | undefined;
  min_backends?: number | undefined;
  max_backends?: number | undefined;
  /** ms; default 15 min. */
  ready_timeout?: number;
  /** ms; default 10 min. */
  scale_down_hold?: number;
  /** ms; default 5 s. */
  track_interval?: number;
}

/** Everything {@linkcode runPrewarm} reads and calls. */
export interface PrewarmDeps {
  settings: PrewarmSettings;
  traffic: TrafficSource;
  events: EventCalendar;
  balancer: PrewarmBalancer;
  /**
   * Placement for contracts; absent when the balancer does not place by load
   * (`expert_balancer.strategy` static or off): contracts then carry no placement.
   */
  placement?: PlacementPort;
  scaler: Scaler;
  pool: PoolPort;
  /** The current plan of `model`, or null. */
  currentPlan: (model: string) => Promise<PlacementPlan | null>;
  /** The pool's load now (capacity signals), or null when unknown. */
  poolLoad: () => CapacitySignals | null;
  /**
   * The per-expert load the balancer observes for `model` (its detection window), or null.
   * A contract's placement is planned on max(observed, predicted) per expert.
   */
  observedExpertLoad?: (model: string) => number[][] | null;
  /** Top-k of the served model (expert tokens per routed token per layer); default 1. */
  topK?: () => number | null;
  /** Per-backend tokens/s used when no report allows an estimate. */
  capacityFallback?: number | undefined;
  /** Fewest backends when `settings.min_backends` is unset; default the active members at start. */
  floor?: number;
  clock: Clock;
  logger: Logger;
}

/** What set the capacity plan: an event, the forecast (more than the pool), or neither. */
export type PrewarmTrigger = "overload" | "event_lead" | "none";

/** One run of the job, as `GET /api/prewarm` lists it. */
export interface PrewarmDecision {
  at: number;
  model: string | null;
  trigger: PrewarmTrigger;
  /**
   * `planned` (a contract asks for capacity), `kept` (the pool fits the prediction),
   * `skipped` (cannot predict), or `error`.
   */
  outcome: "planned" | "kept" | "skipped" | "error";
  reason: string;
  predicted: {
    /** Peak router tokens/s within the lead time, events included. */
    tokensPerS: number;
    /** When the peak is expected. */
    peakAt: number;
    forecaster: string | null;
    /** Events active or within the lead time. */
    events: string[];
    /** Request-type mix at the peak (shares summing to 1). */
    mix: Record<string, number>;
    /** `[layer][expert]` expert tokens/s at the peak (empty when not needed). */
    expertLoad: number[][];
  } | null;
  capacity: {
    perBackendTokensPerS: number | null;
    /** Active backends. */
    backends: number;
    source: "reports" | "remembered" | "configured" | "unknown";
  };
  /** The lead time planned with: measured cold starts, else the configured one. */
  lead: LeadTime;
  /** What the prediction calls for: N backends by T. */
  capacityPlan: CapacityPlan | null;
  /** The contract carrying it out, after this run. */
  contract: ContractSummary | null;
  /** Members by role and requests pending, after this run. */
  members: MemberCounts;
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
