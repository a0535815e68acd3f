/**
 * @module Who steers a pool's placement: the pool's id and the leader term a plan call
 * comes from. Every plan call a router makes carries them (headers
 * {@linkcode POOL_HEADER} and {@linkcode TERM_HEADER}; a staged plan also names them in
 * its `owner` field), and a backend refuses calls from another pool or an older term
 * (409), so two routers that do not share state can never both drive one pool.
 *
 * Design: the pool id names the shared state (routers on one KV share it; `state.pool_id`
 * pins it), the term is the leader lease's (0 for a router that always leads). Terms are
 * comparable only within one pool. {@linkcode admitOwner} is the backend's rule, pure:
 * the first fenced call claims an unclaimed backend; later calls must name the same pool
 * and a term at least the highest seen; an unfenced call is refused once claimed.
 */
import { z } from "zod";

/** The pool id and the leader term a plan call comes from. */
export const PlanOwnerSchema = z.object({
  pool: z.string().min(1).max(200),
  term: z.int().min(0),
});

/** The pool id and the leader term a plan call comes from. */
export type PlanOwner = z.infer<typeof PlanOwnerSchema>;

/** Header naming the pool of a plan call. */
export const POOL_HEADER = "x-switchyard-pool";
/** Header naming the leader term of a plan call. */
export const TERM_HEADER = "x-switchyard-term";

/** The headers carrying `owner` on a plan call. */
export function ownerHeaders(owner: PlanOwner): Record<string, string> {
  return { [POOL_HEADER]: owner.pool, [TERM_HEADER]: String(owner.term) };
}

/**
 * The owner a call's headers name: `null` when neither header is there, an error message
 * when they are malformed (one without the other, a term that is not an integer ≥ 0).
 */
export function ownerFromHeaders(headers: Headers): PlanOwner | null | string {
  const pool = headers.get(POOL_HEADER);
  const term = headers.get(TERM_HEADER);
  if (pool === null && term === null) return null;
  if (pool === null || term === null) {
    return `headers ${POOL_HEADER} and ${TERM_HEADER} go together, got only ${
      pool === null ? TERM_HEADER : POOL_HEADER
    }`;
  }
  const parsed = PlanOwnerSchema.safeParse({ pool, term: /^\d+$/.test(term) ? Number(term) : -1 });
  if (!parsed.success) {
    return `header ${TERM_HEADER} must be an integer >= 0 and ${POOL_HEADER} 1–200 characters, got "${term}"`;
  }
  return parsed.data;
}

/** Why a backend refused a plan call. */
export type OwnerRefusal = "other_pool" | "older_term" | "unfenced";

/** The backend's decision on one plan call. */
export type OwnerDecision =
  | { ok: true; owner: PlanOwner | null; claimed: boolean }
  | { ok: false; reason: OwnerRefusal; message: string };

/**
 * Whether a backend that follows `current` (null: unclaimed) accepts a call from
 * `incoming` (null: unfenced), and whom it follows afterwards. Pure.
 */
export function admitOwner(current: PlanOwner | null, incoming: PlanOwner | null): OwnerDecision {
  if (incoming === null) {
    if (current === null) return { ok: true, owner: null, claimed: false };
    return {
      ok: false,
      reason: "unfenced",
      message:
        `this backend follows pool "${current.pool}" (term ${current.term}); the call names no pool and term`,
    };
  }
  if (current === null) return { ok: true, owner: incoming, claimed: true };
  if (incoming.pool !== current.pool) {
    return {
      ok: false,
      reason: "other_pool",
      message:
        `this backend follows pool "${current.pool}" (term ${current.term}), not "${incoming.pool}": ` +
        `another controller steers it (routers that steer one pool must share state; set state.pool_id to "${current.pool}" only if this router's state replaced that pool's, or restart the backend)`,
    };
  }
  if (incoming.term < current.term) {
    return {
      ok: false,
      reason: "older_term",
      message:
        `this backend follows term ${current.term} of pool "${current.pool}", the call is from older term ${incoming.term}`,
    };
  }
  return { ok: true, owner: incoming, claimed: false };
}

/** Whether an error message is a backend's owner refusal (as {@linkcode admitOwner} words it). */
export function isOwnerRefusal(message: string): boolean {
  return /this backend follows (pool|term) /.test(message);
}
