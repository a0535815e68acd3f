/**
 * @module A {@linkcode LeaseStore} in memory, for unit tests: the same check-and-set
 * semantics as the KV store (the contract test runs both), plus a switch that makes
 * every call fail, to play a router cut off from the shared state.
 */
import type { Lease } from "../../../router/control/leader/lease.ts";
import type { LeaseRead, LeaseStore } from "../../../router/control/leader/lease_store.ts";

/** Shared record of several {@linkcode MemoryLeaseStore} views (one per router). */
export class MemoryLease {
  lease: Lease | null = null;
  version = 0;
  /** Every takeover, oldest first. */
  readonly terms: Lease[] = [];
}

/** One router's view of a {@linkcode MemoryLease}. */
export class MemoryLeaseStore implements LeaseStore {
  readonly #shared: MemoryLease;
  /** When true every call rejects, like a KV that cannot be reached. */
  cutOff = false;
  /** This many next reads reject with "database is locked" (a busy SQLite file). */
  busyReads = 0;

  constructor(shared = new MemoryLease()) {
    this.#shared = shared;
  }

  read(): Promise<LeaseRead> {
    if (this.cutOff) return Promise.reject(new Error("database is locked"));
    if (this.busyReads > 0) {
      this.busyReads--;
      return Promise.reject(new Error("database is locked"));
    }
    const { lease, version } = this.#shared;
    return Promise.resolve({ lease, version: lease === null ? null : String(version) });
  }

  compareAndSet(expected: LeaseRead, next: Lease): Promise<boolean> {
    if (this.cutOff) return Promise.reject(new Error("database is locked"));
    const shared = this.#shared;
    const current = shared.lease === null ? null : String(shared.version);
    if (current !== expected.version) return Promise.resolve(false);
    if (next.term !== shared.lease?.term) shared.terms.push(next);
    shared.lease = next;
    shared.version++;
    return Promise.resolve(true);
  }

  check(read: LeaseRead): Deno.AtomicCheck {
    return { key: ["leader", "lease"], versionstamp: read.version };
  }
}
