/**
 * @module Power-of-two-choices on in-flight requests.
 *
 * Idea: sample two distinct candidates uniformly and send the request to the one with
 * fewer requests in flight (ties go to the first sample). It needs no global ordering,
 * reacts to load immediately, and avoids the herding of "always pick the least loaded"
 * across router instances. Invariant: the most loaded candidate is chosen only when both
 * samples tie, so a hot backend is starved of new work until it catches up. Knob: the
 * injected `random` (tests seed it).
 */
import type { BackendView } from "../pool/backend_view.ts";
import { assertCandidates, type RoutingPolicy } from "./policy.ts";
import { twoDistinct } from "./_two_choices.ts";

/** Options of {@linkcode PowerOfTwoPolicy}. */
export interface PowerOfTwoOptions {
  /** Uniform random number in [0, 1); default `Math.random`. */
  random?: () => number;
}

/** Power-of-two-choices: the less loaded of two distinct random candidates. */
export class PowerOfTwoPolicy implements RoutingPolicy {
  readonly name = "p2c";
  readonly #random: () => number;

  constructor(options: PowerOfTwoOptions = {}) {
    this.#random = options.random ?? Math.random;
  }

  pick(candidates: readonly BackendView[]): BackendView {
    assertCandidates(candidates);
    if (candidates.length === 1) return candidates[0]!;
    // Step 1: two distinct indices — the second draws from the n-1 others.
    const [first, second] = twoDistinct(this.#random, candidates.length);
    // Step 2: fewer in flight wins; ties keep the first (itself a uniform choice).
    const a = candidates[first]!;
    const b = candidates[second]!;
    return b.inFlight < a.inFlight ? b : a;
  }
}
