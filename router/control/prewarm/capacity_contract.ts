/**
 * @module A capacity contract — "N backends ready, with this placement staged, by T" — and
 * how it stands, pure.
 *
 * Design.
 * - The contract is opened by the pre-warm job from a {@linkcode CapacityPlan} and
 *   carried out by the capacity controller (scaler requests, staging, activation).
 * - {@linkcode assessContract} judges it from what is observed: backends ready for it,
 *   backends requested and not ready yet (with when they were asked for), and the
 *   measured cold start at the lead's percentile. Pending requests are expected ready at
 *   `requestedAt + coldStart`; when the shortfall cannot be covered before `readyBy` the
 *   contract is `at_risk`, once `readyBy` passes short of the target it is `missed`.
 * - A request older than `readyTimeoutMs` that never became ready is `stuck`: a scaler
 *   that never reports ready is named, not waited for silently.
 */
import type { PlacementPlan } from "../../../shared/placement_plan.ts";
import type { CapacityPlan } from "./capacity_plan.ts";

/** How a contract stands. */
export type ContractStatus =
  /** Fewer ready than the target; the pending requests arrive in time. */
  | "on_track"
  /** Fewer ready than the target, and the pending requests (if any) arrive too late. */
  | "at_risk"
  /** The deadline passed short of the target. */
  | "missed"
  /** The target is ready (its placement may still be staging). */
  | "ready";

/** A contract as the job keeps it. */
export interface CapacityContract {
  /** `c1`, `c2`, … per router. */
  id: string;
  openedAt: number;
  /** Backends to have ready. */
  target: number;
  /** When (ms since the epoch). */
  readyBy: number;
  /** `event` or `forecast`. */
  source: "event" | "forecast";
  /** The event it prepares for, if any. */
  event: string | null;
  /** Until when its traffic is expected (event end, or the forecast peak); then it closes. */
  until: number;
  /** `[layer][expert]` expert tokens/s its placement is planned for; null: none known. */
  load: number[][] | null;
  /** Router tokens/s from which its traffic counts as arrived (activation on the ramp). */
  rampTokensPerS: number | null;
  reason: string;
}

/** What the controller observes about a contract. */
export interface ContractObservation {
  now: number;
  /** Backends ready for it (serving, plus standby ones ready). */
  ready: number;
  /** When each backend asked for and not ready yet was requested (ms since the epoch). */
  pending: readonly number[];
  /** Cold start at the lead's percentile (ms). */
  coldStartMs: number;
  /** A request pending this long (ms) is stuck. */
  readyTimeoutMs: number;
}

/** The assessment. */
export interface ContractAssessment {
  status: ContractStatus;
  /** Target − ready (≥ 0). */
  shortfall: number;
  /** When the target is expected ready; null: ready already; Infinity: not requested. */
  expectedReadyAt: number | null;
  /** Pending requests older than `readyTimeoutMs`. */
  stuck: number;
  /** One sentence: where it stands and why. */
  message: string;
}

/** How `contract` stands; see the module doc. */
export function assessContract(
  contract: Pick<CapacityContract, "target" | "readyBy" | "id">,
  observed: ContractObservation,
): ContractAssessment {
  const { now } = observed;
  const shortfall = Math.max(0, contract.target - observed.ready);
  const pending = [...observed.pending].sort((a, b) => a - b);
  const stuck = pending.filter((at) => now - at >= observed.readyTimeoutMs).length;
  const by = new Date(contract.readyBy).toISOString();
  if (shortfall === 0) {
    return {
      status: "ready",
      shortfall,
      expectedReadyAt: null,
      stuck,
      message: `contract ${contract.id}: ${observed.ready} of ${contract.target} backends ready`,
    };
  }
  // The earliest-requested pending backends cover the shortfall, each after a cold start.
  const covering = pending.filter((at) => now - at < observed.readyTimeoutMs).slice(0, shortfall);
  const expectedReadyAt = covering.length < shortfall
    ? Infinity
    : Math.max(now, ...covering.map((at) => at + observed.coldStartMs));
  const ready = `${observed.ready} of ${contract.target} backends ready`;
  const stuckNote = stuck > 0 ? `; ${stuck} requested backend(s) never became ready` : "";
  if (now >= contract.readyBy) {
    return {
      status: "missed",
      shortfall,
      expectedReadyAt,
      stuck,
      message: `contract ${contract.id} missed its deadline ${by}: ${ready}${stuckNote}`,
    };
  }
  if (expectedReadyAt > contract.readyBy) {
    const when = expectedReadyAt === Infinity
      ? `${shortfall - covering.length} not requested or not coming`
      : `expected ready ${new Date(expectedReadyAt).toISOString()}`;
    return {
      status: "at_risk",
      shortfall,
      expectedReadyAt,
      stuck,
      message:
        `contract ${contract.id} will miss its deadline ${by}: ${ready}, ${when}${stuckNote}`,
    };
  }
  return {
    status: "on_track",
    shortfall,
    expectedReadyAt,
    stuck,
    message: `contract ${contract.id}: ${ready}, the rest expected by ${
      new Date(expectedReadyAt).toISOString()
    } (deadline ${by})`,
  };
}

/** A contract with what was done for it. */
export interface ContractState extends CapacityContract {
  assessment: ContractAssessment | null;
  /** The version staged for it, and on which backends (ids). */
  staged: { plan: PlacementPlan; version: number; backends: string[]; at: number } | null;
  activatedAt: number | null;
  /** Statuses already escalated (each logged once). */
  escalated: string[];
}

/** The job's view of a contract (`GET /api/prewarm`). */
export interface ContractSummary {
  id: string;
  source: "event" | "forecast";
  event: string | null;
  target: number;
  readyBy: number;
  until: number;
  status: ContractAssessment["status"] | "activated" | "closed";
  ready: number;
  pending: number;
  stagedVersion: number | null;
  /** The backends (ids) the staged version places experts on. */
  stagedBackends: string[];
  activatedAt: number | null;
  expectedReadyAt: number | null;
  message: string;
}

/** Backends by role, and requests pending (the timeline's columns). */
export interface MemberCounts {
  active: number;
  standby: number;
  draining: number;
  /** Active and standby members that passed their checks and described the model. */
  ready: number;
  /** Requested from the scaler, not in the pool ready yet. */
  pending: number;
  /** What the scaler was last asked for. */
  desired: number;
}

/** An alert condition the router's alert manager adds to its own. */
export interface CapacityCondition {
  id: string;
  kind: "capacity";
  subject: string;
  value: number;
  threshold: number;
  message: string;
}

/** What a job run hands the controller. */
export interface ContractInput {
  plan: CapacityPlan;
  model: string | null;
  capacityPerBackend: number | null;
  threshold: number;
  /** Until when the planned traffic lasts (event end, or the forecast peak). */
  until: number;
  /** `[layer][expert]` tokens/s at the peak, for the contract's placement. */
  load: number[][] | null;
  /** Router tokens/s from which the contract's traffic counts as arrived. */
  rampTokensPerS: number | null;
}
