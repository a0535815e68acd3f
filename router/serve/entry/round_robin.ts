/**
 * @module Round-robin: candidates in turn, ignoring load. Predictable; the baseline.
 */
import type { BackendView } from "../pool/backend_view.ts";
import { assertCandidates, type RoutingPolicy } from "./policy.ts";

/** Picks candidates in rotation; the rotation survives the candidate list changing size. */
export class RoundRobinPolicy implements RoutingPolicy {
  readonly name = "round_robin";
  #next = 0;

  pick(candidates: readonly BackendView[]): BackendView {
    assertCandidates(candidates);
    const index = this.#next % candidates.length;
    this.#next = (this.#next + 1) % Number.MAX_SAFE_INTEGER;
    return candidates[index]!;
  }
}
