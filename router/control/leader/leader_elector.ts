/**
 * @module Keeps this router's side of the leader lease: tries to take or renew it every
 * `renewIntervalMs` (a follower also tries exactly when the holder's lease expires, so
 * failover takes at most the TTL after the leader's last renewal), says whether this
 * router leads now, tells listeners when that changes, and hands out the fence that
 * leader-only writes check (`fence()`).
 *
 * A busy store ("database is locked": several routers on one SQLite file) is retried at
 * once with backoff (`withKvRetry`), so a takeover read does not wait for the next
 * attempt; any other KV failure is logged and retried at the next attempt; leadership
 * then simply lapses with time: `isLeader()` turns false `marginMs` before
 * the last written expiry, whatever the store does. `stop()` gives the lease up so a
 * follower takes over at its next attempt instead of waiting for the TTL.
 */
import type { Logger } from "../../../shared/logger.ts";
import type { Clock, TimerHandle } from "../../runtime/clock.ts";
import { decideLease, leads, type Lease, released } from "./lease.ts";
import type { LeaseStore } from "./lease_store.ts";
import { type KvRetryOptions, withKvRetry } from "../state/kv_retry.ts";

/** Options of {@linkcode LeaderElector}. */
export interface LeaderElectorOptions {
  store: LeaseStore;
  /** This router's name in the lease. */
  id: string;
  ttlMs: number;
  renewIntervalMs: number;
  clock: Clock;
  logger: Logger;
  /** How long before expiry a holder stops acting; default min(1 s, ttl / 10). */
  marginMs?: number;
  /** Retries of a busy store within one attempt; default 5 attempts from 20 ms. */
  retry?: KvRetryOptions;
}

/** What `GET /api/leader` shows. */
export interface LeaderStatus {
  id: string;
  leader: boolean;
  term: number | null;
  /** The lease as last read or written. */
  lease: Lease | null;
}

/** This router's view of the lease; see the module doc. */
export class LeaderElector {
  readonly #options: LeaderElectorOptions;
  readonly #marginMs: number;
  readonly #listeners = new Set<(leader: boolean) => void>();
  /** The lease as last read or written (any holder). */
  #seen: Lease | null = null;
  #leading = false;
  #timer: TimerHandle | undefined;
  #running = false;
  #attempt: Promise<void> | undefined;
  #failing = false;
  /** Retry waits in progress; stop() ends them. */
  readonly #wakers = new Set<() => void>();

  constructor(options: LeaderElectorOptions) {
    this.#options = options;
    this.#marginMs = options.marginMs ?? Math.min(1000, options.ttlMs / 10);
  }

  /** This router's name in the lease. */
  get id(): string {
    return this.#options.id;
  }

  /** Whether this router may act as leader now. */
  isLeader(): boolean {
    const seen = this.#seen;
    return seen !== null &&
      leads(seen, this.id, seen.term, this.#options.clock.now(), this.#marginMs);
  }

  /** The current term when leading, else null. */
  term(): number | null {
    return this.isLeader() ? this.#seen!.term : null;
  }

  /**
   * Milliseconds since the lease as last read or written was renewed (its holder's last
   * write: expiry − ttl), whoever holds it; null before any lease was seen.
   */
  renewalAgeMs(): number | null {
    const seen = this.#seen;
    if (seen === null) return null;
    return Math.max(0, this.#options.clock.now() - (seen.expiresAt - this.#options.ttlMs));
  }

  /** For `GET /api/leader`. */
  status(): LeaderStatus {
    return { id: this.id, leader: this.isLeader(), term: this.term(), lease: this.#seen };
  }

  /** Calls `listener(true|false)` when leadership changes; returns an unsubscribe. */
  onChange(listener: (leader: boolean) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Tries now, then keeps the lease (or watches it) until {@linkcode stop}. */
  start(): Promise<void> {
    if (this.#running) return this.#attempt ?? Promise.resolve();
    this.#running = true;
    return this.tryNow();
  }

  /** One attempt to take or renew the lease (joins one in progress). */
  tryNow(): Promise<void> {
    this.#attempt ??= this.#try().finally(() => {
      this.#attempt = undefined;
      this.#schedule();
    });
    return this.#attempt;
  }

  /**
   * The atomic check a leader-only write must include, or null when this router does not
   * lead: it reads the lease again, so the write fails if anyone took it meanwhile.
   */
  async fence(): Promise<Deno.AtomicCheck | null> {
    if (!this.isLeader()) return null;
    const { store, clock } = this.#options;
    const current = await store.read();
    const term = this.#seen?.term ?? -1;
    return leads(current.lease, this.id, term, clock.now(), this.#marginMs)
      ? store.check(current)
      : null;
  }

  /** Stops trying and gives the lease up if held (a follower takes over at once). */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer !== undefined) this.#options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const wake of [...this.#wakers]) wake();
    await this.#attempt;
    if (!this.isLeader()) return this.#update();
    const { store, clock, logger } = this.#options;
    try {
      const read = await store.read();
      if (read.lease?.holder === this.id && read.lease.term === this.#seen!.term) {
        const given = released(read.lease, clock.now());
        if (await store.compareAndSet(read, given)) this.#seen = given;
      }
    } catch (error) {
      logger.warn("leader lease not released", {
        event: "leader",
        error: (error as Error).message,
      });
    }
    this.#seen = this.#seen && released(this.#seen, clock.now());
    this.#update();
  }

  async #try(): Promise<void> {
    const { store, id, ttlMs, clock, logger } = this.#options;
    // Retries wait on the injected clock (tests drive it); stop() cuts the waits short.
    const sleep = (ms: number) =>
      new Promise<void>((resolve) => {
        if (!this.#running) return resolve();
        const wake = () => {
          this.#wakers.delete(wake);
          clock.clearTimeout(handle);
          resolve();
        };
        const handle = clock.setTimeout(wake, ms);
        this.#wakers.add(wake);
      });
    const retry = { attempts: 5, baseDelayMs: 20, sleep, ...this.#options.retry };
    try {
      const read = await withKvRetry(() => store.read(), retry);
      const decision = decideLease(read.lease, id, clock.now(), ttlMs);
      if (decision.kind === "follow") {
        this.#seen = decision.holder;
      } else if (await withKvRetry(() => store.compareAndSet(read, decision.next), retry)) {
        this.#seen = decision.next;
      } else {
        this.#seen = (await withKvRetry(() => store.read(), retry)).lease;
      }
      if (this.#failing) logger.info("leader lease reachable again", { event: "leader" });
      this.#failing = false;
    } catch (error) {
      if (!this.#failing) {
        logger.warn("leader lease unavailable", {
          event: "leader",
          error: (error as Error).message,
        });
      }
      this.#failing = true;
    }
    this.#update();
  }

  /** Notices a change of leadership (also one that lapsed with time) and tells listeners. */
  #update(): void {
    const leading = this.isLeader();
    if (leading === this.#leading) return;
    this.#leading = leading;
    const lease = this.#seen;
    this.#options.logger.info(leading ? "leader elected" : "leader lost", {
      event: "leader",
      router: this.id,
      state: leading ? "leader" : "follower",
      term: lease?.term ?? null,
      since: leading ? lease?.since ?? null : null,
      holder: lease?.holder ?? null,
    });
    for (const listener of this.#listeners) {
      try {
        listener(leading);
      } catch (error) {
        this.#options.logger.error("leader listener failed", { error: (error as Error).message });
      }
    }
  }

  #schedule(): void {
    if (!this.#running || this.#timer !== undefined) return;
    const { clock, renewIntervalMs } = this.#options;
    let delay = renewIntervalMs;
    const seen = this.#seen;
    if (seen !== null && !this.isLeader()) {
      // A follower tries again exactly when the holder's lease runs out.
      const expiry = seen.expiresAt - clock.now() + 1;
      if (expiry > 0) delay = Math.min(delay, expiry);
    } else if (seen !== null) {
      // A leader also wakes when it must stop acting, so listeners hear it in time.
      const lapse = seen.expiresAt - this.#marginMs - clock.now();
      if (lapse > 0) delay = Math.min(delay, lapse);
    }
    this.#timer = clock.setTimeout(() => {
      this.#timer = undefined;
      void this.tryNow();
    }, delay);
  }
}
