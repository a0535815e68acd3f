/**
 * @module The discovery loop: every `intervalMs` it asks the source for the backends
 * now and makes the pool match — new URLs `add`ed (they join rotation once a health check
 * passes), vanished ones `remove`d (work already forwarded to them finishes or retries on
 * another backend) — then tells `onChange` (the balancer re-plans for the new members).
 * A source that fails leaves the pool as it is, with one warning per failure streak.
 */
import type { Logger } from "../../../shared/logger.ts";
import type { Clock } from "../../runtime/clock.ts";
import { PeriodicRounds } from "../../runtime/periodic_rounds.ts";
import type { BackendSource } from "./backend_source.ts";
import { normaliseUrls } from "./backend_source.ts";

/** The pool operations discovery needs (`BackendPool` has them). */
export interface DiscoveredPool {
  urls(): string[];
  add(url: string): boolean;
  remove(url: string): boolean;
}

/** A membership change. */
export interface MembershipChange {
  added: string[];
  removed: string[];
}

/** Members to add and remove so that `current` becomes `found` (pure). */
export function membershipChange(
  current: readonly string[],
  found: readonly string[],
): MembershipChange {
  const have = new Set(normaliseUrls(current));
  const want = new Set(normaliseUrls(found));
  return {
    added: [...want].filter((url) => !have.has(url)),
    removed: [...have].filter((url) => !want.has(url)),
  };
}

/** Options of {@linkcode Discovery}. */
export interface DiscoveryOptions {
  clock: Clock;
  logger: Logger;
  intervalMs: number;
  onChange?: (change: MembershipChange) => void;
}

/** Keeps a pool equal to what a source finds; see the module doc. */
export class Discovery {
  readonly #source: BackendSource;
  readonly #pool: DiscoveredPool;
  readonly #options: DiscoveryOptions;
  readonly #rounds: PeriodicRounds;
  #failing = false;

  constructor(source: BackendSource, pool: DiscoveredPool, options: DiscoveryOptions) {
    this.#source = source;
    this.#pool = pool;
    this.#options = options;
    this.#rounds = new PeriodicRounds(options.clock, options.intervalMs, () => this.#round());
  }

  /** Runs a first round (the pool is filled when it resolves), then one every interval. */
  start(): Promise<void> {
    return this.#rounds.start();
  }

  /** Re-reads the source now (joins a round in progress). */
  refresh(): Promise<void> {
    return this.#rounds.runNow();
  }

  stop(): Promise<void> {
    return this.#rounds.stop();
  }

  async #round(): Promise<void> {
    const { logger, onChange } = this.#options;
    let found: string[];
    try {
      found = await this.#source.list();
    } catch (error) {
      if (!this.#failing) {
        logger.warn("backend discovery failed; keeping the pool", {
          event: "discovery",
          source: this.#source.name,
          error: (error as Error).message,
        });
      }
      this.#failing = true;
      return;
    }
    this.#failing = false;
    const change = membershipChange(this.#pool.urls(), found);
    if (change.added.length === 0 && change.removed.length === 0) return;
    change.added.forEach((url) => this.#pool.add(url));
    change.removed.forEach((url) => this.#pool.remove(url));
    logger.info("backend pool changed", {
      event: "discovery",
      source: this.#source.name,
      added: change.added,
      removed: change.removed,
      members: this.#pool.urls().length,
    });
    try {
      onChange?.(change);
    } catch (error) {
      logger.error("discovery listener failed", { error: (error as Error).message });
    }
  }
}
