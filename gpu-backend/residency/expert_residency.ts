/**
 * @module Book-keeping of expert residency on one backend: which routed experts are
 * warm, their bytes and last use (in least-recently-used order), the memory budget, and
 * cold starts per expert (count, ms sum, ms max). No I/O: the placement state loads and
 * unloads sessions and tells this what happened; the eviction policy decides.
 */
import type { Resident } from "./eviction_policy.ts";

/** Cold starts of one expert: loads paid by a request, and their milliseconds. */
export interface ColdStartStats {
  count: number;
  msSum: number;
  msMax: number;
}

/** Options of {@linkcode ExpertResidency}. */
export interface ExpertResidencyOptions {
  /** Bytes of routed-expert weights kept warm at most; `null` = unlimited (default). */
  budgetBytes?: number | null;
  /** Weight bytes of routed expert `(layer, expert)`. */
  bytes: (layer: number, expert: number) => number;
  /** Clock in ms; default `performance.now`. */
  now?: () => number;
}

interface WarmEntry {
  bytes: number;
  lastUsedAt: number;
}

/** Warm routed experts (LRU order), budget and cold-start counters. */
export class ExpertResidency {
  /** Budget in bytes, or `null` for unlimited. */
  readonly budgetBytes: number | null;
  readonly now: () => number;
  readonly #bytes: (layer: number, expert: number) => number;
  /** Least recently used first (a touch moves an entry to the end). */
  readonly #warm = new Map<string, WarmEntry>();
  readonly #coldStarts = new Map<string, ColdStartStats>();
  #used = 0;

  constructor(options: ExpertResidencyOptions) {
    const budget = options.budgetBytes ?? null;
    if (budget !== null && !(budget > 0)) {
      throw new RangeError(`Cannot track residency: budgetBytes must be > 0, got ${budget}`);
    }
    this.budgetBytes = budget;
    this.#bytes = options.bytes;
    this.now = options.now ?? (() => performance.now());
  }

  /** Weight bytes of a routed expert. */
  bytesOf(layer: number, expert: number): number {
    return this.#bytes(layer, expert);
  }

  /** Bytes of the warm experts. */
  get usedBytes(): number {
    return this.#used;
  }

  /** Whether the warm experts exceed the budget. */
  get overBudget(): boolean {
    return this.budgetBytes !== null && this.#used > this.budgetBytes;
  }

  /** Whether an expert is warm. */
  isWarm(key: string): boolean {
    return this.#warm.has(key);
  }

  /** Records that an expert became warm (used now). */
  warmed(key: string, layer: number, expert: number): void {
    if (this.#warm.has(key)) return this.touch(key);
    const bytes = this.bytesOf(layer, expert);
    this.#warm.set(key, { bytes, lastUsedAt: this.now() });
    this.#used += bytes;
  }

  /** Records that an expert was unloaded. */
  evicted(key: string): void {
    const entry = this.#warm.get(key);
    if (!entry) return;
    this.#warm.delete(key);
    this.#used -= entry.bytes;
  }

  /** Marks a warm expert used now; ignores cold ones. */
  touch(key: string): void {
    const entry = this.#warm.get(key);
    if (!entry) return;
    this.#warm.delete(key);
    entry.lastUsedAt = this.now();
    this.#warm.set(key, entry);
  }

  /** Warm experts, least recently used first, with pin and busy flags from the caller. */
  residents(flags: (key: string) => { pinned: boolean; busy: boolean }): Resident[] {
    return [...this.#warm].map(([key, entry]) => ({ key, ...entry, ...flags(key) }));
  }

  /** Records a cold start of `key` that took `ms`. */
  recordColdStart(key: string, ms: number): void {
    const stats = this.#coldStarts.get(key);
    if (stats) {
      stats.count++;
      stats.msSum += ms;
      stats.msMax = Math.max(stats.msMax, ms);
    } else {
      this.#coldStarts.set(key, { count: 1, msSum: ms, msMax: ms });
    }
  }

  /** Cold starts per expert key (experts that never had one are absent). */
  coldStarts(): ReadonlyMap<string, Readonly<ColdStartStats>> {
    return this.#coldStarts;
  }
}
