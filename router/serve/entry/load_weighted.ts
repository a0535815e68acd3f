/**
 * @module Power-of-two-choices on reported load: in-flight work plus utilisation.
 *
 * Idea: like `p2c`, sample two distinct candidates and take the less loaded, but score
 * each as `inFlight + k · utilisation`, where utilisation (share of slot time spent
 * executing over the last report interval, in [0, 1]) comes from the backends' load
 * reports. It sees what in-flight counts miss: a backend that is slow (weaker device,
 * hotter experts) or busy with other routers' traffic. `inFlight` is the larger of this
 * router's live count and the backend's reported count (which includes other routers).
 * Invariant: utilisation counts only when both samples have a fresh report; otherwise
 * the pair is compared on live in-flight counts alone, exactly as `p2c` does, so a
 * backend that stopped reporting is neither favoured nor punished. Knobs: `k`
 * (`utilisationWeight`, default 4: a saturated backend counts as four more requests in
 * flight), the injected `loadOf` and `random`.
 */
import type { BackendView } from "../pool/backend_view.ts";
import { assertCandidates, type RoutingPolicy } from "./policy.ts";
import { twoDistinct } from "./_two_choices.ts";

/** A backend's reported load, as the policy uses it. */
export interface BackendLoadSignal {
  /** Share of slot time spent executing over the last interval, in [0, 1]. */
  utilisation: number;
  /** Requests in flight on the backend at its last report (from every router). */
  inFlight: number;
}

/** Options of {@linkcode LoadWeightedPolicy}. */
export interface LoadWeightedOptions {
  /** Backend id → its fresh reported load, or `undefined`; default: never any. */
  loadOf?: (backendId: string) => BackendLoadSignal | undefined;
  /** In-flight requests a fully utilised backend is worth; default 4. */
  utilisationWeight?: number;
  /** Uniform random number in [0, 1); default `Math.random`. */
  random?: () => number;
}

/** Power-of-two-choices on `inFlight + k · utilisation`; see the module doc. */
export class LoadWeightedPolicy implements RoutingPolicy {
  readonly name = "load";
  readonly #loadOf: (backendId: string) => BackendLoadSignal | undefined;
  readonly #weight: number;
  readonly #random: () => number;

  constructor(options: LoadWeightedOptions = {}) {
    this.#loadOf = options.loadOf ?? (() => undefined);
    this.#weight = options.utilisationWeight ?? 4;
    this.#random = options.random ?? Math.random;
    if (!(this.#weight >= 0) || !Number.isFinite(this.#weight)) {
      throw new RangeError(
        `Cannot create load policy: utilisationWeight must be finite and >= 0, got ${this.#weight}`,
      );
    }
  }

  pick(candidates: readonly BackendView[]): BackendView {
    assertCandidates(candidates);
    if (candidates.length === 1) return candidates[0]!;
    // Step 1: two distinct samples, as p2c.
    const [first, second] = twoDistinct(this.#random, candidates.length);
    const a = candidates[first]!;
    const b = candidates[second]!;
    // Step 2: score both on reports when both have one, else on live in-flight counts.
    const loadA = this.#loadOf(a.id);
    const loadB = this.#loadOf(b.id);
    if (loadA === undefined || loadB === undefined) return b.inFlight < a.inFlight ? b : a;
    const score = (view: BackendView, load: BackendLoadSignal) =>
      Math.max(view.inFlight, load.inFlight) + this.#weight * load.utilisation;
    // Step 3: lower score wins; ties keep the first (itself a uniform choice).
    return score(b, loadB) < score(a, loadA) ? b : a;
  }
}
