/**
 * @module The backend's side of plan fencing: whom this backend follows (pool id and
 * leader term, `shared/plan_owner.ts`), checked on every plan-changing call before it
 * does anything. A refused call answers 409 naming the owner, is logged (once per
 * pool, term and reason) and counted by reason (`switchyard_plan_refused_total`).
 */
import { ApiError } from "../../shared/errors.ts";
import type { Logger } from "../../shared/logger.ts";
import {
  admitOwner,
  ownerFromHeaders,
  type OwnerRefusal,
  type PlanOwner,
} from "../../shared/plan_owner.ts";

/** Distinct refusals logged before the gate stops logging new ones. */
const LOGGED_LIMIT = 100;

/** Whom this backend's placement follows; see the module doc. */
export class PlanOwnerGate {
  readonly #logger: Logger;
  #owner: PlanOwner | null = null;
  readonly #refused = new Map<OwnerRefusal, number>();
  readonly #logged = new Set<string>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** The pool and term followed now; null until a fenced call claims this backend. */
  get owner(): PlanOwner | null {
    return this.#owner;
  }

  /** Refused calls by reason since start. */
  refusals(): ReadonlyMap<OwnerRefusal, number> {
    return this.#refused;
  }

  /**
   * Admits a plan call (`action`, e.g. "stage plan 7") from the owner its headers name
   * (else `bodyOwner`, a staged plan's own); throws a 409 {@linkcode ApiError} when refused
   * and a 400 when the headers are malformed.
   */
  admit(action: string, headers: Headers, bodyOwner?: PlanOwner): void {
    const fromHeaders = ownerFromHeaders(headers);
    if (typeof fromHeaders === "string") {
      throw new ApiError("bad_request", `Cannot ${action}: ${fromHeaders}`);
    }
    const incoming = fromHeaders ?? bodyOwner ?? null;
    const decision = admitOwner(this.#owner, incoming);
    if (decision.ok) {
      if (decision.claimed) {
        this.#logger.info("plan owner claimed", {
          event: "plan_owner",
          pool: decision.owner!.pool,
          term: decision.owner!.term,
        });
      } else if (decision.owner && decision.owner.term !== this.#owner?.term) {
        this.#logger.info("plan owner term", {
          event: "plan_owner",
          pool: decision.owner.pool,
          term: decision.owner.term,
          previous_term: this.#owner?.term ?? null,
        });
      }
      if (decision.owner) this.#owner = decision.owner;
      return;
    }
    this.#refused.set(decision.reason, (this.#refused.get(decision.reason) ?? 0) + 1);
    const key = `${decision.reason}|${incoming?.pool}|${incoming?.term}`;
    if (!this.#logged.has(key) && this.#logged.size < LOGGED_LIMIT) {
      this.#logged.add(key);
      this.#logger.warn("plan call refused", {
        event: "plan_owner",
        action,
        reason: decision.reason,
        pool: incoming?.pool ?? null,
        term: incoming?.term ?? null,
        owner_pool: this.#owner?.pool ?? null,
        owner_term: this.#owner?.term ?? null,
      });
    }
    throw new ApiError("conflict", `Cannot ${action}: ${decision.message}`);
  }
}
