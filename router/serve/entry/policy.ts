/**
 * @module The routing-policy interface: choose the entry backend for one request.
 */
import type { BackendView } from "../pool/backend_view.ts";

/** Chooses one backend among healthy candidates that serve the requested model. */
export interface RoutingPolicy {
  /** Config name of the policy (`router.policy`). */
  readonly name: string;
  /**
   * Picks one of `candidates` (never empty; callers check). Must return an element of
   * `candidates`, not a copy.
   */
  pick(candidates: readonly BackendView[]): BackendView;
}

/** Throws unless there is at least one candidate (a caller bug, not a client error). */
export function assertCandidates(candidates: readonly BackendView[]): void {
  if (candidates.length === 0) throw new RangeError("Cannot pick a backend: no candidates");
}
