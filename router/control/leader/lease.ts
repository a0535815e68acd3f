/**
 * @module The leader lease, pure: who holds it, in which term, until when.
 *
 * Design: one record in shared state, `{holder, term, expiresAt}`, changed only by an
 * atomic check-and-set against what was read. A router may write it when it is free
 * (none, or expired: `now >= expiresAt`) — taking a new term — or when it holds it
 * (renewal: same term, later expiry). Terms only grow, so a term number names one
 * leadership and fences everything that leadership writes: a write that checks the
 * record it read fails once anyone else has taken the lease.
 *
 * Invariant (with clocks that agree within `marginMs`): two routers never both believe
 * they lead — a holder stops acting `marginMs` before its expiry, nobody else may take
 * the lease before that expiry.
 */

/** The lease record kept in shared state. */
export interface Lease {
  /** The router holding it. */
  holder: string;
  /** Leadership number: +1 at every takeover, unchanged by renewals. */
  term: number;
  /** Wall-clock ms after which anyone may take it. */
  expiresAt: number;
  /** When the holder took it (this term). */
  since: number;
}

/** What a router should do with the lease it read. */
export type LeaseDecision =
  /** Write `next` (check-and-set against what was read). */
  | { kind: "acquire" | "renew"; next: Lease }
  /** Someone else holds it; try again later. */
  | { kind: "follow"; holder: Lease };

/** The decision of router `me` at `now` over the lease it read (`null`: none yet). */
export function decideLease(
  current: Lease | null,
  me: string,
  now: number,
  ttlMs: number,
): LeaseDecision {
  if (!(ttlMs > 0)) throw new RangeError(`Cannot decide the lease: ttl must be > 0, got ${ttlMs}`);
  if (current !== null && current.holder === me && now < current.expiresAt) {
    return { kind: "renew", next: { ...current, expiresAt: now + ttlMs } };
  }
  if (current === null || now >= current.expiresAt) {
    const term = (current?.term ?? 0) + 1;
    return { kind: "acquire", next: { holder: me, term, expiresAt: now + ttlMs, since: now } };
  }
  return { kind: "follow", holder: current };
}

/** Whether `me` may act as leader of `term` at `now` under `lease` (stops `marginMs` early). */
export function leads(
  lease: Lease | null,
  me: string,
  term: number,
  now: number,
  marginMs: number,
): boolean {
  return lease !== null && lease.holder === me && lease.term === term &&
    now < lease.expiresAt - marginMs;
}

/** A lease given up: expired at `now`, so the next reader takes it at once. */
export function released(lease: Lease, now: number): Lease {
  return { ...lease, expiresAt: Math.min(lease.expiresAt, now) };
}
