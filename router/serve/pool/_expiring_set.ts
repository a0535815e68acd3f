/**
 * @module A bounded set whose members expire: remembers recent misses without letting
 * a client that probes many names grow memory without limit (oldest entries go first).
 */

/** Names remembered until a given time, at most `capacity` of them. */
export class ExpiringSet {
  readonly #capacity: number;
  readonly #until = new Map<string, number>();

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(
        `Cannot create ExpiringSet: capacity must be a positive integer, got ${capacity}`,
      );
    }
    this.#capacity = capacity;
  }

  /** Remembers `name` until time `until`, evicting the oldest entry when full. */
  add(name: string, until: number): void {
    this.#until.delete(name);
    if (this.#until.size >= this.#capacity) this.#until.delete(this.#until.keys().next().value!);
    this.#until.set(name, until);
  }

  /** Whether `name` is remembered at time `now` (expired entries are dropped). */
  has(name: string, now: number): boolean {
    const until = this.#until.get(name);
    if (until === undefined) return false;
    if (until > now) return true;
    this.#until.delete(name);
    return false;
  }

  /** Entries held, expired or not. */
  get size(): number {
    return this.#until.size;
  }
}
