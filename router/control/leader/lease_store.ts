/**
 * @module Where the lease lives: an interface with atomic check-and-set, and its Deno
 * KV implementation (`["leader", "lease"]`). The version a read returns is what a write
 * checks, and what fenced writes elsewhere (plans) check too.
 */
import type { Lease } from "./lease.ts";

/** A lease as read, with the version a check-and-set compares. */
export interface LeaseRead {
  lease: Lease | null;
  /** Opaque version (`null`: the key does not exist). */
  version: string | null;
}

/** Atomic storage of one lease record. */
export interface LeaseStore {
  read(): Promise<LeaseRead>;
  /** Writes `next` if the record is still at `expected.version`; false when it moved. */
  compareAndSet(expected: LeaseRead, next: Lease): Promise<boolean>;
  /** The atomic check that makes another write in the same KV fail unless the lease is still `read`. */
  check(read: LeaseRead): Deno.AtomicCheck;
}

/** Key of the lease record. */
export const LEASE_KEY: Deno.KvKey = ["leader", "lease"];

/** Prefix of the lease log: `[...TERMS_PREFIX, term]` → {@linkcode TermRecord}. */
export const TERMS_PREFIX: Deno.KvKey = ["leader", "terms"];

/** One leadership in the lease log, written with the takeover itself. */
export interface TermRecord {
  term: number;
  holder: string;
  /** When it was taken. */
  since: number;
  /** The expiry of the lease it replaced (`null`: first term): `since >= previousExpiresAt`. */
  previousExpiresAt: number | null;
  previousHolder: string | null;
}

/** {@linkcode LeaseStore} in Deno KV. */
export class KvLeaseStore implements LeaseStore {
  readonly #kv: Deno.Kv;
  readonly #key: Deno.KvKey;

  constructor(kv: Deno.Kv, key: Deno.KvKey = LEASE_KEY) {
    this.#kv = kv;
    this.#key = key;
  }

  async read(): Promise<LeaseRead> {
    const entry = await this.#kv.get<Lease>(this.#key);
    return { lease: entry.value, version: entry.versionstamp };
  }

  async compareAndSet(expected: LeaseRead, next: Lease): Promise<boolean> {
    const operation = this.#kv.atomic()
      .check({ key: this.#key, versionstamp: expected.version })
      .set(this.#key, next);
    if (next.term !== expected.lease?.term) {
      // A takeover: the lease log gets its term in the same commit.
      const record: TermRecord = {
        term: next.term,
        holder: next.holder,
        since: next.since,
        previousExpiresAt: expected.lease?.expiresAt ?? null,
        previousHolder: expected.lease?.holder ?? null,
      };
      operation.set([...TERMS_PREFIX, next.term], record);
    }
    return (await operation.commit()).ok;
  }

  /** The lease log, oldest term first. */
  async terms(): Promise<TermRecord[]> {
    const records: TermRecord[] = [];
    for await (const entry of this.#kv.list<TermRecord>({ prefix: TERMS_PREFIX })) {
      records.push(entry.value);
    }
    return records;
  }

  /** The lease log's record of `term`, or null. */
  async term(term: number): Promise<TermRecord | null> {
    return (await this.#kv.get<TermRecord>([...TERMS_PREFIX, term])).value;
  }

  check(read: LeaseRead): Deno.AtomicCheck {
    return { key: this.#key, versionstamp: read.version };
  }
}
